package room

import (
	"slices"
	"strings"

	"foundry/internal/problem"
)

// CompileMessage is one error or warning of compiling a snippet: where it
// is (a file of the snippet, its 1-based line and 0-based column; File ""
// when it is about no file) and what it says.
type CompileMessage struct {
	File     string `json:"file"`
	Line     int    `json:"line"`
	Column   int    `json:"column"`
	Text     string `json:"text"`
	LineText string `json:"line_text"`
}

// Compile is what a proposal keeps of compiling its snippet: whether it
// compiled, its errors and warnings, and the content hash of the files it
// compiled. Never the code it compiled to: a pending proposal holds nothing
// a browser can run.
type Compile struct {
	OK       bool             `json:"ok"`
	Hash     string           `json:"hash"`
	Errors   []CompileMessage `json:"errors"`
	Warnings []CompileMessage `json:"warnings"`
	// Told says the proposer was told this result in the answer to its
	// proposal (false for proposals made before Foundry told it).
	Told bool `json:"told,omitempty"`
}

// RenameApp is a person renaming a launcher app (CheckName applies).
func RenameApp(d *Doc, instanceID, name string) error {
	i, err := launcherApp(d, instanceID)
	if err != nil {
		return err
	}
	name, err = CheckName(name)
	if err != nil {
		return err
	}
	d.Apps[i].Name = name
	return nil
}

// MoveApp is a person moving a launcher app to position (0-based, among the
// apps in the launcher; removed apps keep their relative order after them).
func MoveApp(d *Doc, instanceID string, position int) error {
	i, err := launcherApp(d, instanceID)
	if err != nil {
		return err
	}
	launcher := Launcher(d)
	if position < 0 || position >= len(launcher) {
		return problem.New(problem.Invalid, "position",
			"must be between 0 and %d (the launcher has %d apps); got %d", len(launcher)-1, len(launcher), position)
	}
	app := d.Apps[i]
	at := slices.IndexFunc(launcher, func(a App) bool { return a.InstanceID == instanceID })
	launcher = slices.Delete(launcher, at, at+1)
	launcher = slices.Insert(launcher, position, app)
	for _, a := range d.Apps {
		if a.State != StateInLauncher {
			launcher = append(launcher, a)
		}
	}
	d.Apps = launcher
	return nil
}

// AppIn returns the launcher app instanceID of d (not a removed one).
func AppIn(d *Doc, instanceID string) (App, error) {
	i, err := launcherApp(d, instanceID)
	if err != nil {
		return App{}, err
	}
	return d.Apps[i], nil
}

func launcherApp(d *Doc, instanceID string) (int, error) {
	i := findApp(d, instanceID)
	if i < 0 || d.Apps[i].State != StateInLauncher {
		return -1, problem.New(problem.NotFound, "instance_id",
			"no app '%s' in this Room's launcher: GET the Room to see its apps", problem.Excerpt(strings.TrimSpace(instanceID)))
	}
	return i, nil
}
