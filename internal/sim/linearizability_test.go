package sim

import (
	"math"
	"testing"

	"github.com/anishathalye/porcupine"
)

func TestRegStep_FollowsTheWriteContract(t *testing.T) {
	s0 := regState{version: 3, text: "a"}
	w := regInput{write: true, key: "k-000001", expected: 3, text: "b"}
	ok, s1 := regStep(s0, w, regOutput{kind: outApplied, version: 4})
	if !ok || s1.version != 4 || s1.text != "b" || s1.keys["k-000001"].version != 4 {
		t.Fatalf("a fresh write on the current version: ok=%v state=%+v", ok, s1)
	}
	if s0.keys != nil {
		t.Fatal("step mutated the state it was given")
	}
	for _, tc := range []struct {
		name string
		s    regState
		in   regInput
		out  regOutput
		want bool
	}{
		{"a read sees version and text", s1, regInput{}, regOutput{kind: outRead, version: 4, text: "b"}, true},
		{"a read of an older text is wrong", s1, regInput{}, regOutput{kind: outRead, version: 3, text: "a"}, false},
		{"a resend replays the first result whatever the version", s1, w, regOutput{kind: outApplied, version: 4, replayed: true}, true},
		{"a resend that applies again is a duplicate", s1, w, regOutput{kind: outApplied, version: 5}, false},
		{"a resend answered as a conflict: version checked before key", s1, w, regOutput{kind: outConflict, version: 4}, false},
		{"a known key for another text is refused", s1, regInput{write: true, key: "k-000001", expected: 4, text: "c"}, regOutput{kind: outReused}, true},
		{"a known key for another text must not apply", s1, regInput{write: true, key: "k-000001", expected: 4, text: "c"}, regOutput{kind: outApplied, version: 5}, false},
		{"a stale version is a conflict with the current one", s1, regInput{write: true, key: "k-000002", expected: 3, text: "c"}, regOutput{kind: outConflict, version: 4}, true},
		{"a conflict must name the current version", s1, regInput{write: true, key: "k-000002", expected: 3, text: "c"}, regOutput{kind: outConflict, version: 3}, false},
		{"a stale write must not apply", s1, regInput{write: true, key: "k-000002", expected: 3, text: "c"}, regOutput{kind: outApplied, version: 5}, false},
		{"an unknown outcome fits anything", s1, regInput{write: true, key: "k-000002", expected: 4, text: "c"}, regOutput{kind: outUnknown}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got, _ := regStep(tc.s, tc.in, tc.out); got != tc.want {
				t.Errorf("regStep = %v, want %v", got, tc.want)
			}
		})
	}
}

func op(client int, in regInput, call int64, out regOutput, ret int64) porcupine.Operation {
	return porcupine.Operation{ClientId: client, Input: in, Call: call, Output: out, Return: ret}
}

func TestRegModel_PorcupineJudgesHistories(t *testing.T) {
	init := regState{version: 1, text: ""}
	a := regInput{write: true, key: "key-a-0001", expected: 1, text: "a"}
	b := regInput{write: true, key: "key-b-0001", expected: 1, text: "b"}
	read := regInput{}
	for _, tc := range []struct {
		name    string
		history []porcupine.Operation
		want    porcupine.CheckResult
	}{
		{"two concurrent CAS writes: one applies, one conflicts", []porcupine.Operation{
			op(0, a, 0, regOutput{kind: outApplied, version: 2}, 10),
			op(1, b, 1, regOutput{kind: outConflict, version: 2}, 11),
			op(2, read, 12, regOutput{kind: outRead, version: 2, text: "a"}, 13),
		}, porcupine.Ok},
		{"both concurrent CAS writes apply: lost update", []porcupine.Operation{
			op(0, a, 0, regOutput{kind: outApplied, version: 2}, 10),
			op(1, b, 1, regOutput{kind: outApplied, version: 2}, 11),
		}, porcupine.Illegal},
		{"a lost answer, then the resend replays it", []porcupine.Operation{
			op(0, a, 0, regOutput{kind: outUnknown}, math.MaxInt64),
			op(0, a, 20, regOutput{kind: outApplied, version: 2, replayed: true}, 30),
			op(1, read, 31, regOutput{kind: outRead, version: 2, text: "a"}, 32),
		}, porcupine.Ok},
		{"a lost answer, then the resend applies a second time", []porcupine.Operation{
			op(0, a, 0, regOutput{kind: outUnknown}, math.MaxInt64),
			op(1, read, 5, regOutput{kind: outRead, version: 2, text: "a"}, 6),
			op(0, a, 20, regOutput{kind: outApplied, version: 3}, 30),
		}, porcupine.Illegal},
		{"a lost answer that never took effect", []porcupine.Operation{
			op(0, a, 0, regOutput{kind: outUnknown}, math.MaxInt64),
			op(1, b, 5, regOutput{kind: outApplied, version: 2}, 6),
			op(1, read, 7, regOutput{kind: outRead, version: 2, text: "b"}, 8),
		}, porcupine.Ok},
		{"a read of a value nobody wrote", []porcupine.Operation{
			op(0, read, 0, regOutput{kind: outRead, version: 2, text: "z"}, 1),
		}, porcupine.Illegal},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := porcupine.CheckOperationsTimeout(regModel(init), tc.history, 0); got != tc.want {
				t.Errorf("porcupine = %s, want %s", got, tc.want)
			}
		})
	}
}
