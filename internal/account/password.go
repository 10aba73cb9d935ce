// Package account is how people sign in to Foundry: users with a role and
// an argon2id password, browser sessions kept in the store (so every node
// knows them), one-time links to set a password, CSRF protection and
// sign-in throttling. Manager implements auth.People for the doors that
// serve people (OAuth consent, the REST API).
package account

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"time"
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

// hashParams are argon2id's parameters, OWASP's Password Storage Cheat
// Sheet's first recommendation: "Use Argon2id with a minimum configuration
// of 19 MiB of memory, an iteration count of 2, and 1 degree of
// parallelism." Hashes made with other parameters (m=65536,t=1,p=2 before)
// still verify, and are hashed anew with these at the next successful
// sign-in.
var hashParams = &argon2id.Params{Memory: HashBytes >> 10, Iterations: 2, Parallelism: 1, SaltLength: 16, KeyLength: 32}

// HashBytes is the memory one password hash (or check) takes.
const HashBytes = 19 << 20

// HashPassword hashes pw with argon2id into a PHC string
// ($argon2id$v=19$m=19456,t=2,p=1$salt$key), the form store.User keeps.
func HashPassword(pw string) (string, error) {
	return argon2id.CreateHash(pw, hashParams)
}

var (
	dummyOnce sync.Once
	dummyHash string
)

// dummy is a hash of a password nobody has, compared against when there is
// no real hash to compare with, so an unknown email or an account without a
// password costs the same time and memory as a wrong password: it is made
// with hashParams, as every new hash is.
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
	ok, _ := checkPassword(hash, pw)
	return ok
}

// checkPassword is PasswordMatches, and whether hash was made with other
// parameters than hashParams (so the password should be hashed anew).
func checkPassword(hash, pw string) (ok, stale bool) {
	if hash == "" || !strings.HasPrefix(hash, "$argon2id$") {
		argon2id.ComparePasswordAndHash(pw, dummy())
		return false, false
	}
	ok, p, err := argon2id.CheckHash(pw, hash)
	if err != nil || !ok {
		return false, false
	}
	return true, p.Memory != hashParams.Memory || p.Iterations != hashParams.Iterations ||
		p.Parallelism != hashParams.Parallelism || p.KeyLength != hashParams.KeyLength
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

// hashGate bounds the argon2id computations a Manager runs at once: each
// takes HashBytes, so a burst of sign-ins waits (at most wait) instead of
// taking memory without bound, and past the wait is refused.
type hashGate struct {
	slots chan struct{}
	wait  time.Duration

	mu         sync.Mutex
	collecting bool // a collector goroutine runs
	pending    bool // a hash finished since the collector last looked
}

// errHashBusy: every slot stayed taken for the whole wait.
var errHashBusy = errors.New("too many passwords are being checked at once")

// DefaultHashWait is how long a sign-in waits for a hash slot before it is
// refused with 429.
const DefaultHashWait = 2 * time.Second

// HashSlots is how many password hashes run at once by default under the
// Go memory limit limit (GOMEMLIMIT, --memory-limit; math.MaxInt64 when
// there is none): a quarter of it in HashBytes each, at least 1 and at
// most one per CPU, since each hash keeps a CPU busy and more at once only
// take more memory.
func HashSlots(limit int64) int {
	cpus := max(1, runtime.GOMAXPROCS(0))
	if limit <= 0 || limit == math.MaxInt64 {
		return cpus
	}
	return min(cpus, max(1, int(limit/4/HashBytes)))
}

func newHashGate(slots int, wait time.Duration) *hashGate {
	if slots <= 0 {
		slots = HashSlots(debug.SetMemoryLimit(-1))
	}
	if wait <= 0 {
		wait = DefaultHashWait
	}
	return &hashGate{slots: make(chan struct{}, slots), wait: wait}
}

// run runs fn once a slot is free; errHashBusy if none was within the
// wait, or ctx's error.
func (g *hashGate) run(ctx context.Context, fn func()) error {
	select {
	case g.slots <- struct{}{}:
	default:
		t := time.NewTimer(g.wait)
		defer t.Stop()
		select {
		case g.slots <- struct{}{}:
		case <-t.C:
			return errHashBusy
		case <-ctx.Done():
			return fmt.Errorf("waiting to check a password: %w", ctx.Err())
		}
	}
	defer g.collect()
	defer func() { <-g.slots }()
	fn()
	return nil
}

// freeDelay is how long after the last hash of a burst its memory is
// handed back: at most one forced collection per freeDelay, however many
// sign-ins come.
const freeDelay = 500 * time.Millisecond

// collect hands the memory of finished hashes back to the system once no
// hash runs: each leaves HashBytes of garbage, and under a high GC target
// the Go heap grows to several times what the hashes in flight take and
// keeps it; a collection followed by debug.FreeOSMemory brings RSS back to
// what it was. One collector goroutine at a time does it, freeDelay after
// a hash finished, if none runs then (else the last one to finish calls
// collect again).
func (g *hashGate) collect() {
	g.mu.Lock()
	g.pending = true
	if g.collecting {
		g.mu.Unlock()
		return
	}
	g.collecting = true
	g.mu.Unlock()
	go func() {
		for {
			time.Sleep(freeDelay)
			g.mu.Lock()
			if !g.pending || len(g.slots) > 0 {
				g.collecting = false
				g.mu.Unlock()
				return
			}
			g.pending = false
			g.mu.Unlock()
			debug.FreeOSMemory()
		}
	}()
}
