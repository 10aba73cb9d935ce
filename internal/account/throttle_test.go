package account_test

import (
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"foundry/internal/account"
	"foundry/internal/auth"
)

// newBrowserFrom is a browser whose connections come from ip, another
// loopback address than the server's (skipped where it cannot be used).
func newBrowserFrom(t *testing.T, base, ip string) *browser {
	t.Helper()
	b := newBrowser(t, base)
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 10 * time.Second}
	u, _ := url.Parse(base)
	c, err := d.Dial("tcp", u.Host)
	if err != nil {
		t.Skipf("connecting from %s: %v", ip, err)
	}
	c.Close()
	tr := &http.Transport{DialContext: d.DialContext}
	t.Cleanup(tr.CloseIdleConnections)
	b.c.Transport = tr
	return b
}

// deviceCookieOf is the device cookie set by a response.
func deviceCookieOf(resp *http.Response) *http.Cookie {
	for _, c := range resp.Cookies() {
		if c.Name == "foundry_device" {
			return c
		}
	}
	return nil
}

// signOut signs b out with its home page's form.
func (b *browser) signOut() {
	b.t.Helper()
	_, home := b.get("/")
	if resp, _ := b.post("/signout", url.Values{auth.CSRFField: {hidden(home).Get(auth.CSRFField)}}); resp.StatusCode != http.StatusSeeOther {
		b.t.Fatalf("sign-out: %d", resp.StatusCode)
	}
}

// attack fails guesses sign-ins of email from each address, each answered
// 401; with limited, one more from each is then refused by that address's
// limit for the account.
func attack(t *testing.T, base, email string, guesses int, limited bool, addrs ...string) {
	t.Helper()
	for _, ip := range addrs {
		b := newBrowserFrom(t, base, ip)
		for i := range guesses {
			if resp, page := b.signIn(email, "guess "+ip+" "+strconv.Itoa(i), ""); resp.StatusCode != http.StatusUnauthorized {
				t.Fatalf("guess %d from %s: %d, want 401\n%s", i, ip, resp.StatusCode, errorText(page))
			}
		}
		if !limited {
			continue
		}
		resp, page := b.signIn(email, "one guess too many", "")
		if resp.StatusCode != http.StatusTooManyRequests || !strings.Contains(errorText(page), "for this account from this address") {
			t.Fatalf("guess %d from %s: %d %q, want 429 for this account from this address", guesses+1, ip, resp.StatusCode, errorText(page))
		}
	}
}

// TestAttackerCannotLockTheOwnerOut: someone guessing Ada's password from
// many addresses is held to 5 guesses an address, and after 10 failures
// slows the account down, but Ada, from a browser she signed in with
// before, signs in at once with the right password; from a new browser
// she waits at most 15 minutes, however long the guessing goes on.
func TestAttackerCannotLockTheOwnerOut(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, open opener) {
		e := newEnv(t, open(t), account.Options{})
		own := newBrowser(t, e.srv.URL)
		resp, _ := own.signIn(adaEmail, adaPass, "")
		dev := deviceCookieOf(resp)
		if resp.StatusCode != http.StatusSeeOther || dev == nil {
			t.Fatalf("first sign-in: %d, device cookie %v", resp.StatusCode, dev)
		}
		if !dev.HttpOnly || dev.Secure || dev.SameSite != http.SameSiteLaxMode || dev.Path != "/signin" || time.Duration(dev.MaxAge)*time.Second != account.DeviceLifetime {
			t.Errorf("device cookie %+v; want HttpOnly, not Secure over http, Lax, /signin, a year", dev)
		}
		if strings.Contains(dev.Value, adaEmail) {
			t.Errorf("the device cookie shows the email: %q", dev.Value)
		}
		own.signOut()

		attack(t, e.srv.URL, adaEmail, 5, true, "127.0.0.2", "127.0.0.3")
		// A new browser, from an address that never failed: slowed.
		fresh := newBrowserFrom(t, e.srv.URL, "127.0.0.4")
		resp, page := fresh.signIn(adaEmail, adaPass, "")
		if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") != "1" {
			t.Fatalf("Ada from a new browser after 10 failures: %d, Retry-After %q; want 429, 1\n%s", resp.StatusCode, resp.Header.Get("Retry-After"), errorText(page))
		}
		if txt := errorText(page); !strings.Contains(txt, "slowed down") || !strings.Contains(txt, "Try again in 1 second") || !strings.Contains(txt, "browser you signed in with before") {
			t.Errorf("the back-off says %q", txt)
		}
		// An unknown email under the same attack answers alike.
		attack(t, e.srv.URL, "nobody@example.com", 5, true, "127.0.0.5", "127.0.0.6")
		resp, page2 := fresh.signIn("nobody@example.com", adaPass, "")
		if resp.StatusCode != http.StatusTooManyRequests || errorText(page2) != errorText(page) {
			t.Errorf("an unknown email under attack: %d %q; want what Ada's account answers, 429 %q", resp.StatusCode, errorText(page2), errorText(page))
		}
		// Her own browser passes the back-off; its cookie is for her email only.
		own.mustSignIn(adaEmail, adaPass)
		own.signOut()
		if resp, page := own.signIn("nobody@example.com", adaPass, ""); resp.StatusCode != http.StatusTooManyRequests {
			t.Errorf("Ada's device cookie for another email under attack: %d %q, want 429", resp.StatusCode, errorText(page))
		}
		// The guessing goes on, from a new address each time the back-off
		// ends: it doubles up to 15 minutes, and Ada's browser passes it.
		for round := 1; round <= 12; round++ {
			e.clock.Add(time.Duration(1<<(round-1)) * time.Second)
			attack(t, e.srv.URL, adaEmail, 1, false, "127.0.1."+strconv.Itoa(round))
			want := strconv.Itoa(min(1<<round, 900))
			if resp, _ := fresh.signIn(adaEmail, adaPass, ""); resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") != want {
				t.Fatalf("round %d: Ada from a new browser: %d, Retry-After %q; want 429, %s", round, resp.StatusCode, resp.Header.Get("Retry-After"), want)
			}
			own.mustSignIn(adaEmail, adaPass)
			own.signOut()
		}
		// Once the back-off has passed, the new browser signs in, and is
		// then a known one.
		e.clock.Add(15 * time.Minute)
		fresh.mustSignIn(adaEmail, adaPass)
		fresh.signOut()
		attack(t, e.srv.URL, adaEmail, 1, false, "127.0.0.7")
		fresh.mustSignIn(adaEmail, adaPass)
	})
}

// TestDeviceCookieKeepsItsAddressLimit: a known browser failing from its
// own address is held by that address's limit for the account like any
// other, and a device cookie that was altered passes nothing.
func TestDeviceCookieKeepsItsAddressLimit(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, open opener) {
		e := newEnv(t, open(t), account.Options{AccountAddressFailures: 3, AccountBackoffAfter: 6})
		own := newBrowser(t, e.srv.URL)
		own.mustSignIn(adaEmail, adaPass)
		own.signOut()
		for i := range 3 {
			if resp, _ := own.signIn(adaEmail, "typo "+strconv.Itoa(i), ""); resp.StatusCode != http.StatusUnauthorized {
				t.Fatalf("typo %d: %d", i, resp.StatusCode)
			}
		}
		resp, page := own.signIn(adaEmail, adaPass, "")
		if resp.StatusCode != http.StatusTooManyRequests || !strings.Contains(errorText(page), "for this account from this address") || resp.Header.Get("Retry-After") != "900" {
			t.Fatalf("known browser over its address's limit: %d %q (Retry-After %q), want 429 for this account from this address, 900", resp.StatusCode, errorText(page), resp.Header.Get("Retry-After"))
		}
		e.clock.Add(15 * time.Minute)
		own.mustSignIn(adaEmail, adaPass)
		own.signOut()

		// The account's back-off, and a browser with a tampered cookie.
		attack(t, e.srv.URL, adaEmail, 3, true, "127.0.0.2")
		u, _ := url.Parse(e.srv.URL)
		good := own.cookieObj("foundry_device")
		for _, v := range []string{good.Value[:len(good.Value)-2] + "AA", "usr_x." + strings.SplitN(good.Value, ".", 2)[1], ""} {
			b := newBrowser(t, e.srv.URL)
			if v != "" {
				b.c.Jar.SetCookies(u, []*http.Cookie{{Name: "foundry_device", Value: v, Path: "/signin"}})
			}
			if resp, _ := b.signIn(adaEmail, adaPass, ""); resp.StatusCode != http.StatusTooManyRequests {
				t.Errorf("device cookie %q under the back-off: %d, want 429", v, resp.StatusCode)
			}
		}
		own.mustSignIn(adaEmail, adaPass)
	})
}

// cookieObj is the browser's cookie name for the sign-in path.
func (b *browser) cookieObj(name string) *http.Cookie {
	b.t.Helper()
	u, _ := url.Parse(b.base + "/signin")
	for _, c := range b.c.Jar.Cookies(u) {
		if c.Name == name {
			return c
		}
	}
	b.t.Fatalf("no %s cookie", name)
	return nil
}

// TestThrottleSharedByNodes: two nodes on one database count into the
// same counters: failures on both add up to the limit, the back-off made
// on one holds on the other, and a device cookie set by one passes it on
// the other.
func TestThrottleSharedByNodes(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, open opener) {
		o := account.Options{AccountAddressFailures: 3, AccountBackoffAfter: 9}
		e1 := newEnv(t, open(t), o)
		e2 := newEnv(t, open(t), o)
		b1, b2 := newBrowser(t, e1.srv.URL), newBrowser(t, e2.srv.URL)
		b1.signIn(adaEmail, "wrong one", "")
		b2.signIn(adaEmail, "wrong two", "")
		b1.signIn(adaEmail, "wrong three", "")
		if resp, page := b2.signIn(adaEmail, adaPass, ""); resp.StatusCode != http.StatusTooManyRequests {
			t.Fatalf("node 2 after 3 failures on both nodes: %d %q, want 429", resp.StatusCode, errorText(page))
		}
		e1.clock.Add(15 * time.Minute)
		e2.clock.Add(15 * time.Minute)
		known := newBrowser(t, e1.srv.URL)
		known.mustSignIn(adaEmail, adaPass)
		dev := known.cookieObj("foundry_device")

		for i, ip := range []string{"127.0.0.2", "127.0.0.3"} {
			base := e1.srv.URL
			if i == 1 {
				base = e2.srv.URL
			}
			attack(t, base, adaEmail, 3, true, ip)
		}
		if resp, _ := newBrowser(t, e1.srv.URL).signIn(adaEmail, adaPass, ""); resp.StatusCode != http.StatusTooManyRequests {
			t.Errorf("node 1, new browser, after 9 failures on both nodes: %d, want 429", resp.StatusCode)
		}
		other := newBrowser(t, e2.srv.URL)
		u2, _ := url.Parse(e2.srv.URL)
		other.c.Jar.SetCookies(u2, []*http.Cookie{{Name: dev.Name, Value: dev.Value, Path: "/signin"}})
		other.mustSignIn(adaEmail, adaPass)
	})
}
