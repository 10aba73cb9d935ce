package store

import (
	"context"
	"slices"
	"strings"
	"time"
)

// SignInCounter counts failed sign-ins under one key (an account from one
// address, an account, an address): Failures since First, the newest at
// Last. It is forgotten at Expires, its window after First; a failure
// after that starts it again.
type SignInCounter struct {
	Key         string
	Failures    int
	First, Last time.Time
	Expires     time.Time
}

func (b *Base) SignInCounters(ctx context.Context, keys []string, now time.Time) (map[string]SignInCounter, error) {
	if len(keys) == 0 {
		return nil, nil
	}
	args := make([]any, 0, len(keys)+1)
	for _, k := range keys {
		args = append(args, k)
	}
	args = append(args, now.UnixMicro())
	rows, err := b.R.QueryContext(ctx, b.D.Q(`SELECT key, failures, first_us, last_us, expires_us FROM signin_failures WHERE key IN (?`+strings.Repeat(", ?", len(keys)-1)+`) AND expires_us > ?`), args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]SignInCounter{}
	for rows.Next() {
		var c SignInCounter
		var first, last, exp int64
		if err := rows.Scan(&c.Key, &c.Failures, &first, &last, &exp); err != nil {
			return nil, err
		}
		c.First, c.Last, c.Expires = time.UnixMicro(first).UTC(), time.UnixMicro(last).UTC(), time.UnixMicro(exp).UTC()
		out[c.Key] = c
	}
	return out, rows.Err()
}

func (b *Base) CountSignInFailure(ctx context.Context, now time.Time, windows map[string]time.Duration) error {
	if len(windows) == 0 {
		return nil
	}
	// In key order, so two nodes counting the same keys at once lock
	// their rows in the same order.
	keys := make([]string, 0, len(windows))
	for k := range windows {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	at := now.UnixMicro()
	args := make([]any, 0, 4*len(keys))
	for _, k := range keys {
		args = append(args, k, at, at, now.Add(windows[k]).UnixMicro())
	}
	query := `INSERT INTO signin_failures (key, failures, first_us, last_us, expires_us) VALUES (?, 1, ?, ?, ?)` + strings.Repeat(`, (?, 1, ?, ?, ?)`, len(keys)-1) + `
		ON CONFLICT (key) DO UPDATE SET
			failures = CASE WHEN signin_failures.expires_us <= excluded.last_us THEN 1 ELSE signin_failures.failures + 1 END,
			first_us = CASE WHEN signin_failures.expires_us <= excluded.last_us THEN excluded.first_us ELSE signin_failures.first_us END,
			expires_us = CASE WHEN signin_failures.expires_us <= excluded.last_us THEN excluded.expires_us ELSE signin_failures.expires_us END,
			last_us = excluded.last_us`
	return b.Tx(ctx, func(q Querier) error {
		_, err := q.ExecContext(ctx, b.D.Q(query), args...)
		return err
	})
}

func (b *Base) ForgetSignInFailures(ctx context.Context, keys ...string) error {
	if len(keys) == 0 {
		return nil
	}
	args := make([]any, len(keys))
	for i, k := range keys {
		args[i] = k
	}
	return b.Tx(ctx, func(q Querier) error {
		_, err := q.ExecContext(ctx, b.D.Q(`DELETE FROM signin_failures WHERE key IN (?`+strings.Repeat(", ?", len(keys)-1)+`)`), args...)
		return err
	})
}
