package store

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// Retention defaults. Idempotency keys are kept at least 30 days (SPEC §2):
// a resend after that is a new write. Events are kept 30 days too, except
// the newest event of each resource, which is never pruned, so that
// LastCursor and a poll without a cursor keep working on a Note nobody has
// touched for a year. History (resource_versions) is never pruned.
const (
	DefaultKeyRetention   = 30 * 24 * time.Hour
	DefaultEventRetention = 30 * 24 * time.Hour
	DefaultPruneEvery     = time.Hour
	// DefaultPruneFirst is how long after start the first prune runs.
	DefaultPruneFirst = 10 * time.Minute
	// DefaultUnusedClients: a registered client that no one connected
	// within a day is deleted (open registration must not grow forever).
	DefaultUnusedClients = 24 * time.Hour
	// MaxPruneBatch is the most rows one prune transaction deletes.
	MaxPruneBatch = 1000
)

// Retention says how long idempotency keys and events are kept and how the
// pruner runs. The zero value is the defaults.
type Retention struct {
	Keys   time.Duration // keys older than this are pruned (0: DefaultKeyRetention)
	Events time.Duration // events older than this are pruned, but never a resource's newest (0: DefaultEventRetention)
	// Every is how often the background pruner runs (0: DefaultPruneEvery);
	// negative turns the background pruner off (Prune can still be called).
	Every time.Duration
	// Batch caps the rows deleted per transaction (0 or more than
	// MaxPruneBatch: MaxPruneBatch).
	Batch int
	// UnusedClients is how long a dynamically registered (or fetched)
	// OAuth client no one connected is kept (0: DefaultUnusedClients).
	UnusedClients time.Duration
}

func (r Retention) withDefaults() Retention {
	if r.Keys <= 0 {
		r.Keys = DefaultKeyRetention
	}
	if r.Events <= 0 {
		r.Events = DefaultEventRetention
	}
	if r.UnusedClients <= 0 {
		r.UnusedClients = DefaultUnusedClients
	}
	if r.Every == 0 {
		r.Every = DefaultPruneEvery
	}
	if r.Batch <= 0 || r.Batch > MaxPruneBatch {
		r.Batch = MaxPruneBatch
	}
	return r
}

// PruneReport is what one Prune did.
type PruneReport struct {
	Keys, Events int64 // rows deleted
	// Identity counts expired sessions and OAuth grants, and dynamic
	// clients no one connected, deleted.
	Identity int64
	Batches  int // transactions run (each deletes at most Batch rows)
	// TitleMerges counts the steps that merged the segments of SQLite's
	// title index (see compactTitleIndex).
	TitleMerges int
}

// Prune deletes the idempotency keys and events older than the retention
// periods before now, in transactions of at most Batch rows each (on SQLite,
// each one is its own small job of the writer, so a user write never waits
// behind a long delete). Running it twice, or on two nodes at once, is
// harmless. Every pruned event raises its resource's horizon (EventHorizon),
// which tells a poll that events after its cursor may be gone. On SQLite it
// then merges the title index's segments when they have grown many
// (compactTitleIndex).
func (b *Base) Prune(ctx context.Context, now time.Time) (PruneReport, error) {
	r := b.Retention.withDefaults()
	var rep PruneReport
	keyCut := now.Add(-r.Keys).UnixMicro()
	for {
		var n int64
		err := b.Tx(ctx, func(q Querier) error {
			res, err := q.ExecContext(ctx, b.D.Q(`DELETE FROM idempotency_keys WHERE (scope_type, scope_id, key) IN (
				SELECT scope_type, scope_id, key FROM idempotency_keys WHERE created_us < ? LIMIT ?)`), keyCut, r.Batch)
			if err != nil {
				return err
			}
			n, err = res.RowsAffected()
			return err
		})
		if err != nil {
			return rep, err
		}
		rep.Batches++
		rep.Keys += n
		if n < int64(r.Batch) {
			break
		}
	}
	evCut := now.Add(-r.Events).UnixMicro()
	for {
		var n int64
		err := b.Tx(ctx, func(q Querier) error {
			n = 0
			rows, err := q.QueryContext(ctx, b.D.Q(`DELETE FROM events WHERE cursor IN (
				SELECT e.cursor FROM events e WHERE e.at_us < ? AND e.cursor < (
					SELECT MAX(m.cursor) FROM events m WHERE m.resource_type = e.resource_type AND m.resource_id = e.resource_id)
				ORDER BY e.cursor LIMIT ?)
				RETURNING resource_type, resource_id, cursor`), evCut, r.Batch)
			if err != nil {
				return err
			}
			horizon := map[[2]string]int64{}
			for rows.Next() {
				var typ, id string
				var c int64
				if err := rows.Scan(&typ, &id, &c); err != nil {
					rows.Close()
					return err
				}
				n++
				k := [2]string{typ, id}
				horizon[k] = max(horizon[k], c)
			}
			if err := rows.Close(); err != nil {
				return err
			}
			if err := rows.Err(); err != nil {
				return err
			}
			for k, c := range horizon {
				if _, err := q.ExecContext(ctx, b.D.Q(`INSERT INTO event_horizons (resource_type, resource_id, pruned_through) VALUES (?, ?, ?)
					ON CONFLICT (resource_type, resource_id) DO UPDATE SET pruned_through = excluded.pruned_through
					WHERE excluded.pruned_through > event_horizons.pruned_through`), k[0], k[1], c); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return rep, err
		}
		rep.Batches++
		rep.Events += n
		if n < int64(r.Batch) {
			break
		}
	}
	n, err := b.pruneIdentity(ctx, now, r.UnusedClients, r.Batch)
	rep.Identity = n
	if err != nil {
		return rep, err
	}
	rep.TitleMerges, err = b.compactTitleIndex(ctx)
	return rep, err
}

// EventHorizon is the cursor of the newest pruned event of (typ, id), 0 if
// none was: a poll after a cursor below it may have missed events.
func (b *Base) EventHorizon(ctx context.Context, typ, id string) (int64, error) {
	st, err := b.hot(ctx, `SELECT COALESCE(MAX(pruned_through), 0) FROM event_horizons WHERE resource_type = ? AND resource_id = ?`)
	if err != nil {
		return 0, err
	}
	var c int64
	err = st.QueryRowContext(ctx, typ, id).Scan(&c)
	return c, err
}

// Pruner runs Prune in the background until stopped.
type Pruner struct {
	stop chan struct{}
	done chan struct{}
	once sync.Once
}

// StartPruner starts the background pruner (none when Retention.Every is
// negative): the first run DefaultPruneFirst after start (or Every, if
// sooner), then every Every. Stop it before closing the databases.
func (b *Base) StartPruner() *Pruner {
	p := &Pruner{stop: make(chan struct{}), done: make(chan struct{})}
	r := b.Retention.withDefaults()
	if r.Every < 0 {
		close(p.done)
		return p
	}
	go func() {
		defer close(p.done)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go func() {
			select {
			case <-p.stop:
				cancel()
			case <-ctx.Done():
			}
		}()
		t := time.NewTimer(min(DefaultPruneFirst, r.Every))
		defer t.Stop()
		for {
			select {
			case <-p.stop:
				return
			case <-t.C:
			}
			rep, err := b.Prune(ctx, time.Now())
			if err != nil && ctx.Err() == nil {
				slog.Error("retention: prune failed; it is tried again at the next run", "cause", err)
			} else if rep.Keys > 0 || rep.Events > 0 || rep.TitleMerges > 0 {
				slog.Info("retention: pruned", "idempotency_keys", rep.Keys, "events", rep.Events, "transactions", rep.Batches, "title_index_merges", rep.TitleMerges)
			}
			t.Reset(r.Every)
		}
	}()
	return p
}

// Stop stops the pruner and waits for a running prune to end (it is
// canceled between or inside its transactions).
func (p *Pruner) Stop() {
	if p == nil {
		return
	}
	p.once.Do(func() { close(p.stop) })
	<-p.done
}
