package service

// Presence: who has a Note open, in which tab, and where their cursor,
// selection or selected cell is. It is told to the people watching the
// Note on their live streams and kept in memory only, on the node the
// editor posts to, for PresenceTTL after its last post: it is never a
// version of the Note.

import (
	"context"
	"hash/fnv"
	"slices"
	"strings"
	"time"

	"foundry/internal/note"
	"foundry/internal/problem"
)

// PresenceTTL is how long a peer's presence lasts after its last post.
const PresenceTTL = 30 * time.Second

// maxPeers bounds the peers kept per Note.
const maxPeers = 64

// LivePresence is the Note's presence (Peers), sent when it changes.
const LivePresence LiveKind = 100

// Selection is a markdown cursor and selection: UTF-16 positions in the
// text at the peer's revision (Anchor == Head: a cursor).
type Selection struct {
	Anchor int `json:"anchor" minimum:"0"`
	Head   int `json:"head" minimum:"0"`
}

// CellRef is a selected cell of a sheet.
type CellRef struct {
	SheetID string `json:"sheet_id"`
	Row     int    `json:"row" minimum:"0"`
	Col     int    `json:"col" minimum:"0"`
}

// SlideRef is a slide field being edited.
type SlideRef struct {
	SlideID string `json:"slide_id"`
	Field   string `json:"field" enum:"title,body,notes,layout,theme"`
}

// PresenceArgs are what an editor posts: where its person is now. An
// empty TabID says they left the Note.
type PresenceArgs struct {
	NoteID    string
	ClientID  string     `json:"client_id"`
	TabID     string     `json:"tab_id"`
	Rev       int64      `json:"rev"`
	Selection *Selection `json:"selection,omitempty"`
	Cell      *CellRef   `json:"cell,omitempty"`
	Slide     *SlideRef  `json:"slide,omitempty"`
}

// PeerPerson names the person of a peer.
type PeerPerson struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// Peer is one editor in a Note, as the others see it.
type Peer struct {
	ClientID  string     `json:"client_id"`
	Person    PeerPerson `json:"person"`
	Color     string     `json:"color" description:"The person's colour, #rrggbb"`
	TabID     string     `json:"tab_id"`
	Rev       int64      `json:"rev"`
	Selection *Selection `json:"selection,omitempty"`
	Cell      *CellRef   `json:"cell,omitempty"`
	Slide     *SlideRef  `json:"slide,omitempty"`

	expires time.Time
}

// peerColors are the colours people are drawn in: readable on white and
// apart from each other.
var peerColors = []string{"#d93f0b", "#1f77b4", "#2ca02c", "#9467bd", "#e377c2", "#8c564b", "#17a2b8", "#b8860b"}

// PeerColor is the colour of person id.
func PeerColor(id string) string {
	h := fnv.New32a()
	h.Write([]byte(id))
	return peerColors[h.Sum32()%uint32(len(peerColors))]
}

// SetPresence records where c's editor is in a Note, tells the others who
// watch it on this node, and answers the Note's presence now.
func (s *Service) SetPresence(ctx context.Context, c Caller, a PresenceArgs) ([]Peer, error) {
	if c.IsAgent() {
		return nil, problem.New(PersonOnly, "client_id", "presence is a person's: an agent's writes show as it writes")
	}
	if err := checkClientID(a.ClientID); err != nil {
		return nil, err
	}
	if err := checkPresence(a); err != nil {
		return nil, err
	}
	if _, err := s.noteHead(ctx, c, a.NoteID); err != nil {
		return nil, err
	}
	names, err := s.Actors(ctx, c.Workspace, []string{c.actor()})
	if err != nil {
		return nil, err
	}
	who := names.Of(c.actor())
	l := s.fanout()
	l.mu.Lock()
	f := l.notes[feedKey(c.Workspace, a.NoteID)]
	l.mu.Unlock()
	if f == nil {
		return []Peer{}, nil // nobody follows the Note here
	}
	p := &Peer{ClientID: a.ClientID, Person: PeerPerson{ID: c.User, Name: who.Name}, Color: PeerColor(c.User), TabID: a.TabID, Rev: a.Rev,
		Selection: a.Selection, Cell: a.Cell, Slide: a.Slide, expires: time.Now().Add(PresenceTTL)}
	f.setPeer(c.User, p)
	if it := f.presenceItem(); it != nil {
		return it.Peers, nil
	}
	return []Peer{}, nil
}

func checkPresence(a PresenceArgs) error {
	if a.TabID != "" {
		if err := CheckID("tab_id", a.TabID); err != nil {
			return err
		}
	}
	if a.Rev < 0 {
		return problem.New(problem.Invalid, "rev", "must be ≥ 0: the text revision the selection is in")
	}
	if x := a.Selection; x != nil && (x.Anchor < 0 || x.Head < 0 || x.Anchor > note.MaxMarkdownBytes || x.Head > note.MaxMarkdownBytes) {
		return problem.New(problem.Invalid, "selection", "anchor and head are positions in the text: 0 … its length")
	}
	if x := a.Cell; x != nil {
		if err := CheckID("cell.sheet_id", x.SheetID); err != nil {
			return err
		}
		if x.Row < 0 || x.Col < 0 || x.Row > note.MaxSheetCells || x.Col > note.MaxSheetCells {
			return problem.New(problem.Invalid, "cell", "row and col are 0-based cell positions")
		}
	}
	if x := a.Slide; x != nil {
		if err := CheckID("slide.slide_id", x.SlideID); err != nil {
			return err
		}
		if !slices.Contains([]string{"title", "body", "notes", "layout", "theme"}, x.Field) {
			return problem.New(problem.Invalid, "slide.field", "must be title, body, notes, layout or theme")
		}
	}
	return nil
}

// setPeer records p (TabID "": the peer left) and tells the subscribers.
func (f *noteFeed) setPeer(user string, p *Peer) {
	f.mu.Lock()
	if f.peers == nil {
		f.peers = map[string]*Peer{}
	}
	old := f.peers[p.ClientID]
	if old != nil && old.Person.ID != user {
		f.mu.Unlock()
		return // another person's editor ID: not theirs to move
	}
	if p.TabID == "" {
		delete(f.peers, p.ClientID)
	} else if old != nil || len(f.peers) < maxPeers {
		f.peers[p.ClientID] = p
	}
	same := old != nil && p.TabID != "" && samePlace(old, p)
	f.schedulePrune()
	f.mu.Unlock()
	if !same {
		f.tellPresence()
	}
}

func samePlace(a, b *Peer) bool {
	return a.TabID == b.TabID && a.Rev == b.Rev && eqPtr(a.Selection, b.Selection) && eqPtr(a.Cell, b.Cell) && eqPtr(a.Slide, b.Slide)
}

func eqPtr[T comparable](a, b *T) bool {
	return (a == nil) == (b == nil) && (a == nil || *a == *b)
}

// schedulePrune arranges for expired peers to be dropped (f.mu held).
func (f *noteFeed) schedulePrune() {
	if f.pruning || len(f.peers) == 0 {
		return
	}
	f.pruning = true
	time.AfterFunc(PresenceTTL/3, func() {
		f.mu.Lock()
		f.pruning = false
		now, dropped := time.Now(), false
		for id, p := range f.peers {
			if now.After(p.expires) {
				delete(f.peers, id)
				dropped = true
			}
		}
		f.schedulePrune()
		f.mu.Unlock()
		if dropped {
			f.tellPresence()
		}
	})
}

// presenceItem is the Note's presence now, as one item (nil: nobody).
func (f *noteFeed) presenceItem() *LiveItem {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.peers) == 0 {
		return nil
	}
	return f.presenceLocked()
}

func (f *noteFeed) presenceLocked() *LiveItem {
	peers := make([]Peer, 0, len(f.peers))
	for _, p := range f.peers {
		peers = append(peers, *p)
	}
	slices.SortFunc(peers, func(a, b Peer) int {
		if c := strings.Compare(a.Person.Name, b.Person.Name); c != 0 {
			return c
		}
		return strings.Compare(a.ClientID, b.ClientID)
	})
	return &LiveItem{Kind: LivePresence, Topic: NoteTopic(f.id), Peers: peers}
}

// tellPresence hands the presence to every subscriber of the feed.
func (f *noteFeed) tellPresence() {
	f.mu.Lock()
	it := f.presenceLocked()
	subs := f.subscribers()
	f.mu.Unlock()
	for _, sub := range subs {
		sub.push([]LiveItem{*it})
	}
}
