// Package account is how people sign in to Foundry: users with a role and
// an argon2id password, browser sessions kept in the store (so every node
// knows them), one-time links to set a password, CSRF protection and
// sign-in throttling. Manager implements auth.People for the doors that
// serve people (OAuth consent, the REST API).
package account

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/alexedwards/argon2id"

	"foundry/internal/problem"
)

// Password rules, in bytes: a character outside ASCII counts 2 to 4.
const (
	MinPasswordBytes = 8
	MaxPasswordBytes = 1024
)

// hashParams are argon2id's parameters: 64 MiB, one pass, two lanes (the
// RFC 9106 recommendation for t=1 with the memory a small server can spare
// per sign-in).
var hashParams = &argon2id.Params{Memory: 64 * 1024, Iterations: 1, Parallelism: 2, SaltLength: 16, KeyLength: 32}

// HashPassword hashes pw with argon2id into a PHC string
// ($argon2id$v=19$m=65536,t=1,p=2$salt$key), the form store.User keeps.
func HashPassword(pw string) (string, error) {
	return argon2id.CreateHash(pw, hashParams)
}

var (
	dummyOnce sync.Once
	dummyHash string
)

// dummy is a hash of a password nobody has, compared against when there is
// no real hash to compare with, so an unknown email or an account without a
// password costs the same time as a wrong password.
func dummy() string {
	dummyOnce.Do(func() {
		h, err := HashPassword("no account has this password: it only makes refusals take as long")
		if err != nil {
			panic(err) // crypto/rand never fails on supported platforms
		}
		dummyHash = h
	})
	return dummyHash
}

// PasswordMatches reports whether pw matches hash. An empty or malformed
// hash never matches anything (a dummy hash is compared instead, so the
// answer takes as long as a real one).
func PasswordMatches(hash, pw string) bool {
	if hash == "" || !strings.HasPrefix(hash, "$argon2id$") {
		argon2id.ComparePasswordAndHash(pw, dummy())
		return false
	}
	ok, err := argon2id.ComparePasswordAndHash(pw, hash)
	return err == nil && ok
}

// CheckPasswordRules refuses a password Foundry will not store, naming
// field: 8 to 1024 bytes of UTF-8 text, no control characters.
func CheckPasswordRules(field, pw string) error {
	if n := len(pw); n < MinPasswordBytes || n > MaxPasswordBytes {
		return problem.New(problem.Invalid, field, "is %d bytes long; a password has %d to %d bytes (counted in bytes: a character outside ASCII counts 2 to 4)", n, MinPasswordBytes, MaxPasswordBytes)
	}
	if !utf8.ValidString(pw) {
		return problem.New(problem.Invalid, field, "is not valid UTF-8 text; type the password as text")
	}
	if i := strings.IndexFunc(pw, unicode.IsControl); i >= 0 {
		r, _ := utf8.DecodeRuneInString(pw[i:])
		return problem.New(problem.Invalid, field, "has a control character (%U at byte %d); a password has letters, digits, spaces and symbols only", r, i)
	}
	return nil
}

// hashSlots bounds the argon2id computations running at once on this
// process: each takes 64 MiB, so a burst of sign-ins waits instead of
// exhausting memory.
var hashSlots = make(chan struct{}, 2)

// withHashSlot runs fn once a slot is free, or answers ctx's error.
func withHashSlot(ctx context.Context, fn func()) error {
	select {
	case hashSlots <- struct{}{}:
	case <-ctx.Done():
		return fmt.Errorf("waiting to check a password: %w", ctx.Err())
	}
	defer func() { <-hashSlots }()
	fn()
	return nil
}
