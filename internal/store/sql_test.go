package store

import (
	"slices"
	"strings"
	"testing"
)

func TestStatementsKeepTriggersWhole(t *testing.T) {
	script := `CREATE TABLE a (x INTEGER);
	CREATE INDEX a_x ON a (x);

	create trigger a_ins AFTER INSERT ON a BEGIN
		INSERT INTO b VALUES (new.x);
		DELETE FROM c WHERE y = new.x;
	END;
	INSERT INTO a VALUES (1)`
	got := statements(script)
	for i := range got {
		got[i] = strings.Join(strings.Fields(got[i]), " ")
	}
	want := []string{
		"CREATE TABLE a (x INTEGER)",
		"CREATE INDEX a_x ON a (x)",
		"create trigger a_ins AFTER INSERT ON a BEGIN INSERT INTO b VALUES (new.x); DELETE FROM c WHERE y = new.x; END",
		"INSERT INTO a VALUES (1)",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("statements:\n%q\nwant\n%q", got, want)
	}
}
