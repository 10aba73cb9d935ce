//go:build !unix

package main

import (
	"os"
	"os/exec"
)

func setProcessGroup(*exec.Cmd)     {}
func killGroup(cmd *exec.Cmd) error { return cmd.Process.Kill() }

func interruptGroup(cmd *exec.Cmd) { cmd.Process.Signal(os.Interrupt) }
