package main

import (
	"errors"
	"flag"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"golang.org/x/time/rate"

	"foundry/internal/server"
)

func readLimits(t *testing.T, args ...string) (server.Limits, error) {
	t.Helper()
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	read := limitFlags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return read()
}

func TestServeLimitsDefaultToDefaultLimits(t *testing.T) {
	l, err := readLimits(t)
	if err != nil {
		t.Fatal(err)
	}
	d := server.DefaultLimits
	// A burst of 0 is twice the rate per second: the defaults' own bursts.
	if l.PerToken != d.PerToken || l.PerAddress != d.PerAddress || l.ConcurrentPerToken != d.ConcurrentPerToken ||
		l.BurstPerToken != 0 || 2*int(d.PerToken) != d.BurstPerToken || 2*int(d.PerAddress) != d.BurstPerAddress || l.TrustedProxies != nil {
		t.Fatalf("flags' defaults %+v, want %+v", l, d)
	}
}

func TestServeLimitFlagsRead(t *testing.T) {
	l, err := readLimits(t, "--rate-per-token", "600/m", "--burst-per-token", "5", "--rate-per-address", "0",
		"--max-concurrent-per-token", "0", "--trusted-proxies", "10.0.0.0/8, 192.0.2.1,::1,::ffff:172.16.0.0/108")
	if err != nil {
		t.Fatal(err)
	}
	want := server.Limits{PerToken: rate.Limit(10), BurstPerToken: 5, TrustedProxies: []netip.Prefix{
		netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("192.0.2.1/32"), netip.MustParsePrefix("::1/128"), netip.MustParsePrefix("172.16.0.0/12")}}
	if !reflect.DeepEqual(l, want) {
		t.Fatalf("got %+v\nwant %+v", l, want)
	}
}

func TestServeRefusesLimitsThatAreNone(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--rate-per-token", "20"}, "--rate-per-token"},
		{[]string{"--rate-per-token", "fast"}, `"fast"`},
		{[]string{"--rate-per-token", "20/d"}, "s, m or h"},
		{[]string{"--rate-per-address", "-5/s"}, "--rate-per-address"},
		{[]string{"--burst-per-token", "-1"}, "--burst-per-token"},
		{[]string{"--burst-per-address", "10000000"}, "--burst-per-address"},
		{[]string{"--max-concurrent-per-token", "-2"}, "--max-concurrent-per-token"},
		{[]string{"--trusted-proxies", "balancer.local"}, `"balancer.local"`},
		{[]string{"--trusted-proxies", "10.0.0.1/8"}, "10.0.0.0/8"},
		{[]string{"--trusted-proxies", " , "}, "--trusted-proxies"},
	} {
		_, err := readLimits(t, c.args...)
		var ue usageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want a usage error saying %q", c.args, err, c.want)
		}
	}
	// Through the command: exit 2 before the data folder is touched.
	data := filepath.Join(t.TempDir(), "data")
	code, _, stderr := runInProcess(t, "serve", "--data", data, "--addr", "127.0.0.1:0", "--rate-per-token", "lots")
	if code != 2 || !strings.Contains(stderr, "--rate-per-token") {
		t.Errorf("serve --rate-per-token lots: exit %d, %q", code, stderr)
	}
	if _, err := os.Stat(data); err == nil {
		t.Error("serve created the data folder before refusing")
	}
}
