package account

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"strconv"
	"strings"
	"time"

	"foundry/internal/store"
)

// A device cookie marks a browser that signed in to an account: the
// account's back-off (see throttle.go) lets the right password from it
// in. It holds the user's ID and when it was issued, signed with an HMAC
// key kept in the store (so every node accepts every node's cookies) over
// both and the account's email: it is good for that email only, and only
// while that email is that user's.
const (
	deviceCookie = "foundry_device"
	// DeviceLifetime is how long a device cookie is good for.
	DeviceLifetime = 365 * 24 * time.Hour
	// deviceSecret is the name of the HMAC key in the store.
	deviceSecret = "signin-device-hmac"
)

// deviceKey is the HMAC key of device cookies, read from the store (stored
// first if there is none) once and then kept.
func (m *Manager) deviceKey(ctx context.Context) ([]byte, error) {
	m.keyMu.Lock()
	defer m.keyMu.Unlock()
	if m.devKey != nil {
		return m.devKey, nil
	}
	fresh := make([]byte, 32)
	rand.Read(fresh)
	k, err := m.st.ServerSecret(ctx, deviceSecret, fresh)
	if err != nil {
		return nil, err
	}
	m.devKey = k
	return k, nil
}

func deviceMAC(key []byte, userID, email string, issued int64) []byte {
	h := hmac.New(sha256.New, key)
	h.Write([]byte("foundry device cookie v1\x00" + userID + "\x00" + email + "\x00" + strconv.FormatInt(issued, 10)))
	return h.Sum(nil)
}

// setDevice sets on w the device cookie of u, issued now.
func (m *Manager) setDevice(ctx context.Context, w http.ResponseWriter, u store.User, now time.Time) error {
	key, err := m.deviceKey(ctx)
	if err != nil {
		return err
	}
	issued := now.Unix()
	v := u.ID + "." + strconv.FormatInt(issued, 10) + "." + base64.RawURLEncoding.EncodeToString(deviceMAC(key, u.ID, u.Email, issued))
	http.SetCookie(w, &http.Cookie{
		Name: deviceCookie, Value: v, Path: "/signin", HttpOnly: true, Secure: m.secure, SameSite: http.SameSiteLaxMode,
		Expires: now.Add(DeviceLifetime), MaxAge: int(DeviceLifetime / time.Second),
	})
	return nil
}

// deviceUser is the user ID of r's device cookie if it is one this server
// signed for email, issued within DeviceLifetime of now.
func (m *Manager) deviceUser(r *http.Request, email string, now time.Time) (string, bool) {
	c, err := r.Cookie(deviceCookie)
	if err != nil || len(c.Value) > 256 {
		return "", false
	}
	parts := strings.Split(c.Value, ".")
	if len(parts) != 3 || parts[0] == "" {
		return "", false
	}
	issued, err := strconv.ParseInt(parts[1], 10, 64)
	if err != nil || now.Sub(time.Unix(issued, 0)) > DeviceLifetime || time.Unix(issued, 0).After(now.Add(time.Minute)) {
		return "", false
	}
	mac, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		return "", false
	}
	key, err := m.deviceKey(r.Context())
	if err != nil {
		m.log.ErrorContext(r.Context(), "reading the device cookies' key", "err", err)
		return "", false
	}
	if !hmac.Equal(mac, deviceMAC(key, parts[0], email, issued)) {
		return "", false
	}
	return parts[0], true
}
