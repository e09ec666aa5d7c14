package commands

import (
	"bytes"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// freeText are the flags whose value is the administrator's own text or a
// number: nothing to complete. A new flag that takes a value must either
// complete (its name in nameFlags, memberFlags, enumFlags or fileFlags, or
// a completion function of its own) or be added here, deliberately.
var freeText = []string{"url", "write-url", "max-lag", "wait-replicas", "base", "bind-dn", "timeout", "description", "site-url", "rename", "name", "domain",
	"machine", "id", "tags", "database", "replicator", "log-directory", "log-retention", "since", "until", "by", "run", "object", "at", "seed", "requests", "capacity", "sessions", "assigned", "max-sessions-per-host",
	"load-index-threshold", "connecting-session-threshold", "load-index", "connecting",
	"policy-load-index-threshold", "policy-connecting-session-threshold", "host-load-index-threshold",
	"host-connecting-session-threshold", "lit", "cst", "min",
	"pod-url", "allow-missing-pod", // horizon pull: pods of the live federation, not of the directory
	"ldap-url"}

// eachFlag calls fn with every command and each flag it defines.
func eachFlag(cmd *cobra.Command, fn func(*cobra.Command, *pflag.Flag)) {
	cmd.LocalFlags().VisitAll(func(f *pflag.Flag) { fn(cmd, f) })
	for _, c := range cmd.Commands() {
		eachFlag(c, fn)
	}
}

func TestEveryNameOrEnumFlagCompletes(t *testing.T) {
	root := NewRootCommand(&Globals{Getenv: func(string) string { return "" }})
	known := append(append(append([]string{"context", "setting"}, memberFlags...), fileFlags...), freeText...)
	for name := range assignFlags {
		known = append(known, name)
	}
	for name := range nameFlags {
		known = append(known, name)
	}
	for name := range enumFlags() {
		known = append(known, name)
	}
	checked := 0
	eachFlag(root, func(cmd *cobra.Command, f *pflag.Flag) {
		if slices.Contains([]string{"bool", "int", "int64"}, f.Value.Type()) || f.Name == "help" {
			return
		}
		_, completes := cmd.GetFlagCompletionFunc(f.Name)
		switch {
		case !completes && !slices.Contains(freeText, f.Name):
			t.Errorf("%s --%s takes a value but completes nothing: name it in complete.go's tables, or in freeText if it is free text",
				cmd.CommandPath(), f.Name)
		case completes && slices.Contains(freeText, f.Name):
			t.Errorf("%s --%s completes but is listed as free text", cmd.CommandPath(), f.Name)
		case !slices.Contains(known, f.Name):
			t.Errorf("%s --%s completes through a function of its own: fine, but name it in a table", cmd.CommandPath(), f.Name)
		}
		checked++
	})
	if checked < 50 {
		t.Fatalf("only %d flags checked: the walk is broken", checked)
	}
	// The names the brief lists.
	for _, name := range []string{"entitlement", "connection-server", "pod", "site", "user", "farm", "pool", "group", "host", "client"} {
		if nameFlags[name] == "" {
			t.Errorf("--%s is not a name-taking flag", name)
		}
	}
}

// Every verb of a noun that names an existing object completes its
// argument; create and list complete no files.
func TestNounVerbsComplete(t *testing.T) {
	root := NewRootCommand(&Globals{Getenv: func(string) string { return "" }})
	for noun := range nounKinds {
		cmd, _, err := root.Find([]string{noun})
		if err != nil || cmd == root {
			t.Fatalf("noun %s: %v", noun, err)
		}
		for _, verb := range cmd.Commands() {
			if verb.ValidArgsFunction == nil {
				t.Errorf("%s completes no argument", verb.CommandPath())
			}
		}
	}
	for path := range restKinds {
		if cmd, _, err := root.Find(strings.Fields(path)); err != nil || cmd.CommandPath() != "cpactl "+path {
			t.Errorf("restKinds names %q, which is not a command", path)
		}
	}
}

// completeOut runs cobra's __complete with a fake environment.
func completeOut(t *testing.T, env map[string]string, args ...string) (string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	g := &Globals{IO: IOStreams{In: strings.NewReader(""), Out: &out, Err: &errOut},
		Getenv: func(k string) string { return env[k] }, Interactive: func() bool { return false }}
	root := NewRootCommand(g)
	root.SetArgs(append([]string{cobra.ShellCompRequestCmd}, args...))
	root.SetOut(&out)
	root.SetErr(&errOut)
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	return out.String(), errOut.String()
}

// Every value completion offers for an enumeration flag, the validator
// accepts, and the other way round.
func TestEnumCompletionsAreTheValidatorsValues(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"entitlement", "create", "x", "--scope", ""}, "ANY\nSITE\nLOCAL\n:4\n"},
		{[]string{"entitlement", "create", "x", "--type", ""}, "desktop\napplication\n:4\n"},
		{[]string{"entitlement", "update", "x", "--default-protocol", ""}, "blast\npcoip\nrdp\n:4\n"},
		{[]string{"pod", "update", "x", "--status", "OFF"}, "offline\n:4\n"},
		{[]string{"session", "record", "--state", ""}, "connected\ndisconnected\n:4\n"},
		{[]string{"host", "create", "h", "--features", "rdp,"}, "rdp,multisession\nrdp,unauthenticated\nrdp,rdp\nrdp,pcoip\nrdp,blast\n:4\n"},
		{[]string{"schema", "print", "--format", "ind"}, "indexes\nindexes-ldif\n:4\n"},
		{[]string{"generate", "--preset", ""}, "cpa-max\ndemo\n:4\n"},
	} {
		out, _ := completeOut(t, nil, tt.args...)
		if out != tt.want {
			t.Errorf("%v:\n%s\nwant\n%s", tt.args, out, tt.want)
		}
	}
	for _, s := range scopes {
		if _, err := parseEnum("scope", strings.ToLower(s), scopes...); err != nil {
			t.Error(err)
		}
	}
	for _, k := range poolKinds {
		if _, err := parseKind(kindWord(k)); err != nil {
			t.Error(err)
		}
	}
}

// A server that takes the connection and never answers: completion gives
// up within completionTimeout (a generous bound here, well below the 10 s
// default --timeout it would otherwise wait for), with nothing on stdout
// but the directive and no error text.
func TestCompletionGivesUpOnASilentServer(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			defer c.Close() // held open, never answered
		}
	}()
	start := time.Now()
	out, errOut := completeOut(t, map[string]string{"CPACTL_URL": "ldap://" + l.Addr().String()}, "site", "show", "")
	if took := time.Since(start); took > 3*completionTimeout {
		t.Errorf("completion took %v", took)
	}
	if out != ":4\n" || errOut != "Completion ended with directive: ShellCompDirectiveNoFileComp\n" {
		t.Errorf("stdout %q, stderr %q", out, errOut)
	}
}

// Names come from the store; DOMAIN\uid keeps the domain; group members
// take a kind prefix.
func TestCompletionOfUsersAndMembers(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"user", "show", `CORP\al`}, "CORP\\alice\n:4\n"},
		{[]string{"group", "add-member", "Engineering", "group:Eng"}, "group:Engineering\n:4\n"},
		{[]string{"group", "add-member", "Engineering", "KIOSK"}, "Kiosks\nKIOSK-01\n:4\n"}, // a group and a computer
		{[]string{"entitlement", "add-pool", "Desktops", "lon-d"}, "lon-desktops\n:4\n"},
		{[]string{"site", "show", "UK", ""}, ":4\n"}, // one argument only
	} {
		g, out, errOut := snapshotGlobals(t)
		root := NewRootCommand(g)
		root.SetArgs(append([]string{cobra.ShellCompRequestCmd}, tt.args...))
		root.SetOut(out)
		root.SetErr(errOut)
		if err := root.Execute(); err != nil {
			t.Fatal(err)
		}
		if out.String() != tt.want {
			t.Errorf("%v: %q, want %q", tt.args, out.String(), tt.want)
		}
	}
}
