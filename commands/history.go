package commands

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/cpactl/cpactl/directory"
	"github.com/cpactl/cpactl/history"
	"github.com/cpactl/cpactl/ldapschema"
	"github.com/cpactl/cpactl/output"
)

// The federation's history (docs/history.md): slapd's accesslog overlay
// logs every write; cpactl's writes carry the run that sent them.

func newHistoryCommand(g *Globals) *cobra.Command {
	o := &historyOptions{g: g}
	cmd := &cobra.Command{
		Use:   "history",
		Short: "Show who changed what and when, one line per command run (from slapd's accesslog)",
		Long: `Shows the changes made to the federation, newest first, one line per command
run: when, who (the bound identity), the run ID, what became of it, the
command, and each object it changed by its cpactl name with each attribute's
old -> new value. The history is slapd's accesslog overlay on the provider
(set it up with ` + "`cpactl schema print --format accesslog`" + `; docs/history.md); the
admin and help-desk roles read it.

Writes of cpactl carry their run, so a command's writes are one line;
writes by other clients (ldapmodify, a feed) are one line each. A refused
attempt is marked (refused, partly refused); a transaction that was refused
part way wrote nothing, and its writes the log holds as accepted are shown
as not committed, never as changes. Session records and live figures (what a
feed writes) are left out unless --all.

--since and --until take a time (RFC 3339, 2026-12-02T09:00:00Z) or a
duration ago (90m, 18h, 7d); --object KIND/NAME (site/India, pool/lon-desktops,
entitlement/"Sales Desktops") follows the object through renames; --by USER
takes a bind DN or its first value (ann).`,
		Example: `  cpactl history --since 24h
  cpactl history --object site/India -o json
  cpactl history --by ann --refused
  cpactl history --run 3da6b22477e2`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return o.g.execute(o) },
	}
	f := cmd.Flags()
	f.StringVarP(&o.Output, "output", "o", "table", output.FormatUsage)
	f.StringVar(&o.Since, "since", "", "only changes at or after this time, or this long ago (24h, 7d)")
	f.StringVar(&o.Until, "until", "", "only changes at or before this time, or this long ago")
	f.StringVar(&o.Object, "object", "", "only the changes of one object, KIND/NAME (site/India), followed through renames")
	f.StringVar(&o.By, "by", "", "only the changes made by this bind DN, or the first value of its DN (ann)")
	f.BoolVar(&o.Refused, "refused", false, "only the runs with a refused or failed write")
	f.StringVar(&o.Run, "run", "", "only the run with this run ID")
	f.BoolVar(&o.All, "all", false, "also session records and live figures (what a feed writes)")
	return cmd
}

type historyOptions struct {
	g            *Globals
	Output       string
	Since, Until string
	Object, By   string
	Run          string
	Refused, All bool
}

func (o *historyOptions) run() error {
	p, err := (&readFlags{Output: o.Output}).printer(o.g)
	if err != nil {
		return err
	}
	now := time.Now()
	var q directory.LogQuery
	if q.Since, err = parseMoment("--since", o.Since, now); err != nil {
		return err
	}
	if q.Until, err = parseMoment("--until", o.Until, now); err != nil {
		return err
	}
	if !q.Since.IsZero() && !q.Until.IsZero() && q.Until.Before(q.Since) {
		return errorf("give --since a time before --until", "--until %s is before --since %s", o.Until, o.Since)
	}
	if o.Run != "" {
		if err := history.CheckRunID(o.Run); err != nil {
			return errorf("copy the run ID from the RUN column of `cpactl history`", "--run %q: %v", o.Run, err)
		}
	}
	var kind, name string
	if o.Object != "" {
		if kind, name, err = parseObject(o.Object); err != nil {
			return err
		}
	}
	st, closeFn, err := o.g.Store()
	if err != nil {
		return err
	}
	defer closeFn()
	filter := history.Filter{Run: o.Run, By: o.By, Refused: o.Refused, Feed: o.All, DIT: st.DIT,
		ObjectDNs: map[string]bool{}, ObjectUUIDs: map[string]bool{}}
	if o.Object != "" {
		dn, uuid, err := st.ObjectIdentity(kind, name)
		if err != nil {
			return err
		}
		filter.ObjectDNs[ldapschema.NormalizeDN(dn)] = true
		if uuid != "" {
			filter.ObjectUUIDs[uuid] = true
		}
	}
	col := history.NewCollector()
	if err := st.EachLogRecord(q, col.Add); err != nil {
		return err
	}
	views := historyViews(st.DIT, filter.Apply(col.Entries()))
	return p.Print(views, func(w io.Writer) error {
		if len(views) == 0 {
			_, err := fmt.Fprintln(w, "no changes")
			return err
		}
		var rows [][]string
		for _, v := range views {
			var changes []string
			for _, c := range v.Changes {
				changes = append(changes, c.line())
			}
			rows = append(rows, []string{v.Time, ldapschema.NameOf(v.Who), v.Run, v.Result, v.Command, strings.Join(changes, "; ")})
		}
		return output.Rows(w, []string{"time (UTC)", "who", "run", "result", "command", "changes"}, rows)
	})
}

// parseObject reads --object KIND/NAME.
func parseObject(arg string) (kind, name string, err error) {
	k, n, found := strings.Cut(arg, "/")
	kind, ok := directory.ObjectKinds[strings.ToLower(k)]
	if !found || n == "" || !ok {
		var kinds []string
		for k := range directory.ObjectKinds {
			kinds = append(kinds, k)
		}
		sortBy(kinds, func(s string) string { return s })
		return "", "", errorf("write it KIND/NAME, e.g. site/India; kinds: "+strings.Join(kinds, ", "), "--object %q is not KIND/NAME", arg)
	}
	return kind, n, nil
}

// parseMoment reads a time flag: RFC 3339, or a duration ago (90m, 18h,
// 7d); "" is no time.
func parseMoment(flag, v string, now time.Time) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339, v); err == nil {
		return t, nil
	}
	d, err := parseAgo(v)
	if err != nil || d < 0 {
		return time.Time{}, errorf("give a time as RFC 3339 (2026-12-02T09:00:00Z) or a duration ago (90m, 18h, 7d)",
			"%s %q is neither a time nor a duration", flag, v)
	}
	return now.Add(-d), nil
}

// parseAgo reads a Go duration, or a number of days ("7d").
func parseAgo(v string) (time.Duration, error) {
	if days, ok := strings.CutSuffix(v, "d"); ok {
		d, err := time.ParseDuration(days + "h")
		return 24 * d, err
	}
	return time.ParseDuration(v)
}

// HistoryView is one command run as `history` prints it (JSON contract).
type HistoryView struct {
	Run     string              `json:"run"` // "" for a write by another client
	Time    string              `json:"time"`
	Who     string              `json:"who"`
	Command string              `json:"command"`
	Version string              `json:"version,omitempty"`
	Result  string              `json:"result"` // ok, refused, partly refused, rolled back
	Changes []HistoryChangeView `json:"changes"`
}

// HistoryChangeView is one write of a run.
type HistoryChangeView struct {
	Object string `json:"object"` // "site India", as cpactl names it
	DN     string `json:"dn"`
	Action string `json:"action"` // created, deleted, changed, renamed
	// Result: written; refused (50); failed: CODE; not committed (a
	// transaction refused part way: slapd logged it, then wrote nothing).
	Result     string             `json:"result"`
	RenamedTo  string             `json:"renamed_to,omitempty"`
	Attributes []HistoryValueView `json:"attributes,omitempty"`
	Message    string             `json:"message,omitempty"`
}

// HistoryValueView is one attribute's values before and after, in
// cpactl's words (preferred sites in rank order, references by name).
type HistoryValueView struct {
	Attribute string   `json:"attribute"` // the flag's or the setting's name
	Old       []string `json:"old"`
	New       []string `json:"new"`
	Hidden    bool     `json:"hidden,omitempty"` // a password: no value shown
}

func historyViews(d ldapschema.DIT, entries []history.Entry) []HistoryView {
	views := make([]HistoryView, 0, len(entries))
	for _, e := range entries {
		v := HistoryView{Run: e.Run, Time: e.Time.UTC().Format("2006-01-02 15:04:05"), Who: e.Who,
			Command: e.Command, Version: e.Version, Result: e.Status()}
		for _, c := range e.Changes {
			v.Changes = append(v.Changes, changeView(d, c))
		}
		views = append(views, v)
	}
	return views
}

func changeView(d ldapschema.DIT, c history.Change) HistoryChangeView {
	v := HistoryChangeView{Object: d.Describe(c.DN), DN: c.DN, Message: c.Message}
	switch {
	case c.Written:
		v.Result = "written"
	case c.Result == 50:
		v.Result = "refused"
	case c.Result != 0:
		v.Result = fmt.Sprintf("failed: %d", c.Result)
	default:
		v.Result = "not committed"
	}
	switch c.Op {
	case "add":
		v.Action = "created"
	case "delete":
		v.Action = "deleted"
	case "modrdn":
		v.Action = "renamed"
		v.RenamedTo = ldapschema.NameOf(c.NewDN)
		return v
	default:
		v.Action = "changed"
	}
	rdnAttr, _, _ := strings.Cut(c.DN, "=")
	for _, a := range c.Attrs {
		if c.Op != "modify" && (strings.EqualFold(a.Attr, ldapschema.AttrObjectClass) || strings.EqualFold(a.Attr, rdnAttr)) {
			continue
		}
		if c.Op == "delete" {
			continue // "deleted" says it
		}
		av := HistoryValueView{Attribute: historyWord(a.Attr), Old: valueWords(a.Attr, a.Old), New: valueWords(a.Attr, a.New), Hidden: a.Hidden}
		if a.Hidden {
			av.Old, av.New = []string{}, []string{}
		}
		v.Attributes = append(v.Attributes, av)
	}
	return v
}

// historyWord names an attribute as cpactl's commands do: a setting by
// its name, another attribute as its flag.
func historyWord(attr string) string {
	if s, ok := ldapschema.LookupSetting(attr); ok {
		return s.Alias
	}
	return attrWord(attr)
}

// valueWords writes values as cpactl shows them: preferred sites in rank
// order, references by the name of what they refer to.
func valueWords(attr string, values []string) []string {
	out := []string{}
	if strings.EqualFold(attr, ldapschema.AttrPreferredSite) {
		if l, err := ldapschema.DecodePreferredSites(values); err == nil {
			return append(out, l.Names()...)
		}
	}
	at, isCpactl := ldapschema.Attribute(attr)
	for _, v := range values {
		if isCpactl && at.Syntax == ldapschema.DN || strings.EqualFold(attr, ldapschema.AttrMember) {
			v = ldapschema.NameOf(v)
		}
		out = append(out, v)
	}
	return out
}

// line writes a change for the table: "site India: preferred-site UK, US
// -> US, UK", "pool p1 of pod P created", "site Germany renamed to
// Deutschland", with "(refused)" or "(not committed)" when not written.
func (c HistoryChangeView) line() string {
	var b strings.Builder
	b.WriteString(c.Object)
	switch c.Action {
	case "renamed":
		b.WriteString(" renamed to " + c.RenamedTo)
	case "created", "deleted":
		b.WriteString(" " + c.Action)
	}
	var attrs []string
	for _, a := range c.Attributes {
		if a.Hidden {
			attrs = append(attrs, a.Attribute+" (hidden)")
			continue
		}
		if c.Action == "created" {
			attrs = append(attrs, a.Attribute+" "+listWords(a.New))
			continue
		}
		attrs = append(attrs, a.Attribute+" "+listWords(a.Old)+" -> "+listWords(a.New))
	}
	if len(attrs) > 0 {
		if c.Action == "created" {
			b.WriteString(" (" + strings.Join(attrs, ", ") + ")")
		} else {
			b.WriteString(": " + strings.Join(attrs, ", "))
		}
	}
	if c.Result != "written" {
		b.WriteString(" [" + c.Result + "]")
	}
	return b.String()
}

// listWords writes a value list; an empty value (the placeholder member
// a group of names holds when it has none) is not a value to show.
func listWords(values []string) string {
	var shown []string
	for _, v := range values {
		if v != "" {
			shown = append(shown, v)
		}
	}
	if len(shown) == 0 {
		return "(none)"
	}
	return strings.Join(shown, ",")
}

func newHistoryUndoCommand(g *Globals) *cobra.Command {
	o := &historyUndoOptions{g: g}
	cmd := &cobra.Command{
		Use:   "undo RUN-ID",
		Short: "Take back what one command run wrote, if nothing changed its objects since",
		Long: `Plans the writes that take back what the run RUN-ID wrote (the RUN column of
` + "`cpactl history`" + `, "run" in its JSON), newest first: attributes set back to
their old values, created entries deleted, deleted ones created again,
renames reversed. It refuses (exit 5, naming the object) when an object the
run changed was changed again after it, and writes the plan in one
transaction in which each write asserts its entry still holds what the run
left: a change made meanwhile fails it whole (exit 5), writing nothing.
It prints the plan and asks before writing (--yes off a terminal);
--dry-run prints it only. A password change cannot be undone (the log hides
the value), nor a move to another parent.`,
		Example: `  cpactl history undo 3da6b22477e2 --dry-run
  cpactl history undo 3da6b22477e2 --yes`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Run = args[0]
			return o.g.execute(o)
		},
	}
	o.writeFlags.add(cmd)
	cmd.Flags().BoolVar(&o.Yes, "yes", false, "write without asking (needed when stdin or stdout is not a terminal)")
	return cmd
}

type historyUndoOptions struct {
	g *Globals
	writeFlags
	Run string
	Yes bool
}

func (o *historyUndoOptions) run() error {
	if err := history.CheckRunID(o.Run); err != nil {
		return errorf("copy the run ID from the RUN column of `cpactl history`", "run ID %q: %v", o.Run, err)
	}
	st, closeFn, err := o.g.Store()
	if err != nil {
		return err
	}
	defer closeFn()
	scan := history.NewUndoScan(o.Run)
	if err := st.EachLogRecord(directory.LogQuery{}, scan.Add); err != nil {
		return err
	}
	run, found, err := scan.Result(st.DIT)
	if err != nil {
		return err
	}
	if !found {
		return &Failure{Code: ExitNotFound, Err: fmt.Errorf("run %s is not in the history", o.Run),
			Hint: "the log keeps records for its retention (docs/history.md); list the runs with `cpactl history`"}
	}
	changes := run.WrittenChanges()
	if len(changes) == 0 {
		o.g.report("run %s (%s) wrote nothing: nothing to undo", o.Run, run.Command)
		return nil
	}
	steps, err := history.Inverse(st.DIT, changes)
	if err != nil {
		return errorf("change it back by hand", "cannot undo run %s: %v", o.Run, err)
	}
	plan, err := directory.UndoPlan(steps, func(s history.Step) (string, string) { return undoWords(st.DIT, s) })
	if err != nil {
		return errorf("change it back by hand", "cannot undo run %s: %v", o.Run, err)
	}
	for _, w := range plan.Writes {
		o.g.report("%s", w.Planned())
	}
	if o.DryRun {
		return nil
	}
	if err := confirm(o.g, o.Yes, "the undo of run "+o.Run, fmt.Sprintf("Undo run %s (%s)?", o.Run, run.Command)); err != nil {
		return err
	}
	st.OneTransaction = true
	if err := st.ApplyPlan(plan); err != nil {
		return err
	}
	for _, w := range plan.Writes {
		o.g.report("%s", w.Done())
	}
	return nil
}

// undoWords describes a step of an undo: "set preferred-site of site
// India back to UK,US", "delete pool p1 of pod P", "rename site
// Deutschland back to Germany".
func undoWords(d ldapschema.DIT, s history.Step) (verb, object string) {
	switch s.Op {
	case "modify":
		var parts []string
		for _, a := range s.Attrs {
			parts = append(parts, historyWord(a.Attr)+" back to "+listWords(valueWords(a.Attr, a.Old)))
		}
		return "set", d.Describe(s.DN) + ": " + strings.Join(parts, ", ")
	case "delete":
		return "delete", d.Describe(s.DN) + " (the run created it)"
	case "add":
		return "re-create", d.Describe(s.DN) + " (the run deleted it)"
	case "rename":
		return "rename", d.Describe(s.DN) + " back to " + ldapschema.NameOf(s.NewRDN+",dc=x")
	}
	return s.Op, d.Describe(s.DN)
}
