//go:build unix

package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
)

// servingDir holds one file per server serving the data folder, named by
// its process ID and held under an exclusive flock for as long as it runs.
// The kernel drops the lock when the process ends, however it ends, so a
// file whose lock can be taken is left over and is removed.
const servingDir = ".serving"

// announceServing records that this process serves the data folder dir and
// returns the process IDs of the other live servers of it; release removes
// the record (it is always safe to call).
func announceServing(dir string) (others []int, release func(), err error) {
	release = func() {}
	sd := filepath.Join(dir, servingDir)
	if err := os.MkdirAll(sd, 0o700); err != nil {
		return nil, release, err
	}
	entries, err := os.ReadDir(sd)
	if err != nil {
		return nil, release, err
	}
	me := os.Getpid()
	for _, e := range entries {
		pid, err := strconv.Atoi(strings.TrimSuffix(e.Name(), ".lock"))
		if err != nil || pid == me || !strings.HasSuffix(e.Name(), ".lock") {
			continue
		}
		p := filepath.Join(sd, e.Name())
		f, err := os.OpenFile(p, os.O_RDWR, 0)
		if err != nil {
			continue
		}
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		switch {
		case errors.Is(err, syscall.EWOULDBLOCK):
			others = append(others, pid) // held: that server runs
		case err == nil:
			os.Remove(p) // left over by a server that ended
		}
		f.Close()
	}
	slices.Sort(others)
	p := filepath.Join(sd, strconv.Itoa(me)+".lock")
	f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return others, release, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return others, release, fmt.Errorf("lock %s: %w", p, err)
	}
	fmt.Fprintf(f, "%d\n", me)
	return others, func() {
		os.Remove(p)
		f.Close()
	}, nil
}
