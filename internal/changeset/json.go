package changeset

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf16"
)

// MarshalJSON writes the editor's form (ChangeSet.toJSON): a kept section
// as its length, a replaced one as [length, line, line, …].
func (c ChangeSet) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('[')
	for i := 0; i < len(c.sections); i += 2 {
		if i > 0 {
			b.WriteByte(',')
		}
		n, ins := c.sections[i], c.sections[i+1]
		if ins < 0 {
			b.WriteString(strconv.Itoa(n))
			continue
		}
		b.WriteByte('[')
		b.WriteString(strconv.Itoa(n))
		if ins > 0 {
			for _, line := range strings.Split(decode(c.text(i>>1)), "\n") {
				q, err := json.Marshal(line)
				if err != nil {
					return nil, err
				}
				b.WriteByte(',')
				b.Write(q)
			}
		}
		b.WriteByte(']')
	}
	b.WriteByte(']')
	return b.Bytes(), nil
}

// UnmarshalJSON reads the editor's form, refusing what the editor could
// not have sent: a length that is not a whole number in 0..MaxLength, a
// line holding a line break, a document longer than MaxLength.
func (c *ChangeSet) UnmarshalJSON(data []byte) error {
	set, err := Parse(data)
	if err != nil {
		return err
	}
	*c = set
	return nil
}

// Parse reads a change set in the editor's JSON form.
func Parse(data []byte) (ChangeSet, error) {
	var parts []json.RawMessage
	if err := json.Unmarshal(data, &parts); err != nil {
		return ChangeSet{}, fmt.Errorf("changeset: not a change set: give an array of lengths and [length, line…] replacements (%v)", err)
	}
	// The sections are joined as the editor joins them (a kept section of
	// length zero dropped, neighbours of one kind merged): what the editor
	// sends reads back the same, and nothing else is left to confuse the
	// operations, which expect that form.
	var set builder
	total, after := 0, 0
	for i, raw := range parts {
		raw = bytes.TrimSpace(raw)
		if len(raw) > 0 && raw[0] != '[' {
			n, err := parseLength(raw)
			if err != nil {
				return ChangeSet{}, fmt.Errorf("changeset: part %d: %v", i, err)
			}
			set.add(n, -1, false)
			total += n
			after += n
		} else {
			var elems []json.RawMessage
			if err := json.Unmarshal(raw, &elems); err != nil || len(elems) == 0 {
				return ChangeSet{}, fmt.Errorf("changeset: part %d: a replacement is [length, line…]", i)
			}
			n, err := parseLength(bytes.TrimSpace(elems[0]))
			if err != nil {
				return ChangeSet{}, fmt.Errorf("changeset: part %d: %v", i, err)
			}
			var text []uint16
			for k, e := range elems[1:] {
				var line string
				if err := json.Unmarshal(e, &line); err != nil {
					return ChangeSet{}, fmt.Errorf("changeset: part %d: line %d is not a string", i, k+1)
				}
				if strings.ContainsAny(line, "\r\n") {
					return ChangeSet{}, fmt.Errorf("changeset: part %d: line %d holds a line break: send each line as its own string", i, k+1)
				}
				if k > 0 {
					text = append(text, '\n')
				}
				text = append(text, utf16.Encode([]rune(line))...)
				if len(text) > MaxLength {
					return ChangeSet{}, fmt.Errorf("changeset: part %d: the inserted text is longer than %d", i, MaxLength)
				}
			}
			set.add(n, len(text), false)
			set.insert(text)
			total += n
			after += len(text)
		}
		if total > MaxLength || after > MaxLength {
			return ChangeSet{}, fmt.Errorf("changeset: the document would be longer than %d", MaxLength)
		}
	}
	return set.set(), nil
}

func parseLength(raw []byte) (int, error) {
	n, err := strconv.Atoi(string(raw))
	if err != nil || n < 0 || n > MaxLength {
		return 0, fmt.Errorf("a length is a whole number in 0..%d, not %s", MaxLength, raw)
	}
	return n, nil
}
