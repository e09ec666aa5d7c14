package commands

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cpactl/cpactl/directory"
	"github.com/cpactl/cpactl/directory/ldapclient"
	"github.com/cpactl/cpactl/internal/objkind"
	"github.com/cpactl/cpactl/ldapschema"
	"github.com/cpactl/cpactl/output"
	"github.com/cpactl/cpactl/rules"
)

func newSessionCommand(g *Globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "session",
		Short: "Record, list and end session records (what resolve checks for reconnects)",
		Long: `Session records are the global data layer's list of existing sessions: the
user, the global entitlement, the hosting pod and pool (and RDS host), the
pod that brokered it, its state and the client computer. ` + "`cpactl resolve`" + `
reads them to offer reconnects to existing sessions. They never change a pool's
or host's counters (set those with pool update and host set-load).`,
	}
	return cmd
}

// SessionView is a session record as `session list` and `session show`
// print it (JSON contract). Names come from the DNs stored.
type SessionView struct {
	ID           string `json:"id"`
	User         string `json:"user"`
	Entitlement  string `json:"entitlement"`
	Pod          string `json:"pod"`
	Pool         string `json:"pool"`
	Host         string `json:"host"`
	BrokeringPod string `json:"brokering_pod"`
	State        string `json:"state"` // CONNECTED or DISCONNECTED
	Client       string `json:"client"`
}

func sessionView(s ldapschema.Session) SessionView {
	return SessionView{ID: s.ID, User: ldapschema.NameOf(s.UserDN), Entitlement: ldapschema.NameOf(s.EntitlementDN),
		Pod: ldapschema.NameOf(s.PodDN), Pool: ldapschema.NameOf(s.PoolDN), Host: ldapschema.NameOf(s.HostDN),
		BrokeringPod: ldapschema.NameOf(s.BrokeringPodDN), State: s.State, Client: ldapschema.NameOf(s.ClientDN)}
}

// leftBehind is what a record list does when a name flag names no object
// (missing, from recordFilter): with no record found, the list fails with
// missing (exit 3); with records, which that object left behind, it
// lists them and says so on stderr.
func (g *Globals) leftBehind(missing error, found int) error {
	if missing == nil {
		return nil
	}
	if found == 0 {
		return missing
	}
	g.note("%s: listing the records it left behind", missing)
	return nil
}

type sessionListOptions struct {
	g *Globals
	listFlags
	User, Entitlement, Pod string
}

func newSessionListCommand(g *Globals) *cobra.Command {
	o := &sessionListOptions{g: g}
	cmd := &cobra.Command{
		Use:   "list [--user U] [--entitlement E] [--pod P]",
		Short: "List session records",
		Example: `  cpactl session list --user alice
  cpactl session list --pod uk-pod1 --limit 50
  cpactl session list --entitlement "Sales Desktop" -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return o.g.execute(o) },
	}
	cmd.Flags().StringVar(&o.User, "user", "", "only this user's sessions")
	cmd.Flags().StringVar(&o.Entitlement, "entitlement", "", "only the sessions of this global entitlement")
	cmd.Flags().StringVar(&o.Pod, "pod", "", "only the sessions hosted in this pod")
	o.listFlags.add(cmd, "session records", true)
	return cmd
}

func (o *sessionListOptions) run() error {
	p, st, closeFn, sel, err := o.open(o.g)
	if err != nil {
		return err
	}
	defer closeFn()
	filter, missing, err := recordFilter(st, o.User, o.Entitlement, o.Pod)
	if err != nil {
		return err
	}
	sel.Filter = filter
	selected, err := st.SelectSessions(sel)
	if err != nil {
		return err
	}
	if err := o.g.leftBehind(missing, selected.Total); err != nil {
		return err
	}
	sessions := selected.Items
	defer o.counted(o.g, p, len(sessions), selected.Total)
	// The table is written from the records: the views (seven names cut
	// out of DNs in each of up to 250,000 records) are built for JSON and
	// YAML only.
	view := func() any {
		views := make([]SessionView, 0, len(sessions))
		for _, s := range sessions {
			views = append(views, sessionView(s))
		}
		return views
	}
	return p.PrintLazy(view, func(w io.Writer) error {
		rows := make([][]string, 0, len(sessions))
		for _, s := range sessions {
			v := sessionView(s)
			rows = append(rows, []string{v.ID, v.User, v.Entitlement, v.Pod, v.Pool, orDash(v.Host), orDash(v.BrokeringPod),
				strings.ToLower(v.State), orDash(v.Client)})
		}
		return output.RowsWide(w, []string{"id", "user", "entitlement", "pod", "pool", "host", "brokering pod", "state", "client"},
			[]bool{6: true, 8: true}, rows)
	})
}

type sessionShowOptions struct {
	g *Globals
	readFlags
	ID string
}

func newSessionShowCommand(g *Globals) *cobra.Command {
	o := &sessionShowOptions{g: g}
	cmd := &cobra.Command{
		Use:     "show ID",
		Short:   "Print a session record",
		Example: `  cpactl session show 3f2a9c0d41b7e8a65c12 -o json`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.ID = args[0]
			return o.g.execute(o)
		},
	}
	o.readFlags.add(cmd)
	return cmd
}

func (o *sessionShowOptions) run() error {
	p, st, closeFn, err := o.open(o.g)
	if err != nil {
		return err
	}
	defer closeFn()
	s, err := readSession(st, o.ID)
	if err != nil {
		return err
	}
	v := sessionView(s)
	return p.Print(v, func(w io.Writer) error {
		return output.Fields(w, [][2]string{{"id", v.ID}, {"user", v.User}, {"entitlement", v.Entitlement}, {"pod", v.Pod},
			{"pool", v.Pool}, {"host", orDash(v.Host)}, {"brokering pod", orDash(v.BrokeringPod)},
			{"state", strings.ToLower(v.State)}, {"client", orDash(v.Client)}})
	})
}

// readSession reads the session record with this ID (exit 3 when there is
// none).
func readSession(st *directory.Store, id string) (ldapschema.Session, error) {
	e, err := st.Entry(st.DIT.Session(id))
	if err != nil {
		return ldapschema.Session{}, err
	}
	if e == nil || !ldapschema.HasClass(e, ldapschema.ClassSession) {
		return ldapschema.Session{}, &ldapclient.NotFoundError{Kind: objkind.Session, Name: id}
	}
	return ldapschema.SessionFromEntry(e)
}

// sessionManaged lists the attributes a re-recorded session rewrites.
var sessionManaged = []string{ldapschema.AttrUserDN, ldapschema.AttrEntitlementDN, ldapschema.AttrPodDN,
	ldapschema.AttrBrokeringPodDN, ldapschema.AttrPoolDN, ldapschema.AttrHostDN, ldapschema.AttrClientDN,
	ldapschema.AttrSessionState}

type sessionRecordOptions struct {
	g *Globals
	writeFlags
	ID, User, Entitlement, Pod, Pool, Host, BrokeringPod, State, Client string
}

func newSessionRecordCommand(g *Globals) *cobra.Command {
	o := &sessionRecordOptions{g: g}
	cmd := &cobra.Command{
		Use:   "record --user U --entitlement E --pod P --pool POOL [flags]",
		Short: "Record an existing session (idempotent: the same session recorded again is unchanged)",
		Long: `Records a session as the global data layer would after step 11 of the
connection workflow. Every name is checked first: the pool must be in the
pod and associated with the entitlement; an RDS host must belong to the
pool's farm (desktop pools take no host).

The record's ID is --id, or derived from the user, entitlement, pod, pool,
host and client: recording the same session again changes nothing, and a
new state or brokering pod updates the record.`,
		Example: `  cpactl session record --user alice --entitlement "Sales Desktop" --pod uk-pod1 --pool uk-desk \
    --brokering-pod in-pod1 --state disconnected --client laptop-1`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return o.g.execute(o) },
	}
	f := cmd.Flags()
	f.StringVar(&o.ID, "id", "", "the record's ID (default: derived from the session's user, entitlement, pod, pool, host and client)")
	f.StringVar(&o.User, "user", "", "the user (required)")
	f.StringVar(&o.Entitlement, "entitlement", "", "the global entitlement (required)")
	f.StringVar(&o.Pod, "pod", "", "the hosting pod (required)")
	f.StringVar(&o.Pool, "pool", "", "the pool (required)")
	f.StringVar(&o.Host, "host", "", "the RDS host, for a farm-backed pool")
	f.StringVar(&o.BrokeringPod, "brokering-pod", "", "the pod that brokered the session")
	f.StringVar(&o.State, "state", "connected", "connected or disconnected")
	f.StringVar(&o.Client, "client", "", "the client computer")
	o.writeFlags.add(cmd)
	return cmd
}

func (o *sessionRecordOptions) validate() error {
	var missing []string
	for _, f := range []struct{ flag, v string }{{"user", o.User}, {"entitlement", o.Entitlement}, {"pod", o.Pod}, {"pool", o.Pool}} {
		if f.v == "" {
			missing = append(missing, "--"+f.flag)
		}
	}
	if len(missing) > 0 {
		return errorf("a session record names its user, entitlement, pod and pool", "session record needs %s",
			strings.Join(missing, ", "))
	}
	state, err := parseEnum("state", o.State, sessionStates...)
	if err != nil {
		return err
	}
	o.State = state
	if o.ID != "" {
		return checkName(objkind.Session, o.ID, maxName)
	}
	return nil
}

// build looks every name up and returns the record to write.
func (o *sessionRecordOptions) build(st *directory.Store) (ldapschema.Session, error) {
	s := ldapschema.Session{State: o.State}
	user, err := st.User(o.User)
	if err != nil {
		return s, err
	}
	ge, err := st.Entitlement(o.Entitlement)
	if err != nil {
		return s, err
	}
	pod, err := st.Pod(o.Pod)
	if err != nil {
		return s, err
	}
	pool, err := st.Pool(o.Pool)
	if err != nil {
		return s, err
	}
	s.UserDN, s.EntitlementDN, s.PodDN, s.PoolDN = user.DN, ge.DN, pod.DN, pool.DN
	if err := rules.SessionPool(ge, pod, pool); err != nil {
		return s, refused(err)
	}
	if o.Host != "" {
		h, err := st.Host(o.Host)
		if err != nil {
			return s, err
		}
		if err := rules.SessionHost(pool, h); err != nil {
			return s, refused(err)
		}
		s.HostDN = h.DN
	}
	if o.BrokeringPod != "" {
		bp, err := st.Pod(o.BrokeringPod)
		if err != nil {
			return s, err
		}
		s.BrokeringPodDN = bp.DN
	}
	if o.Client != "" {
		c, err := st.Computer(o.Client)
		if err != nil {
			return s, err
		}
		s.ClientDN = c.DN
	}
	s.ID = o.ID
	if s.ID == "" {
		s.ID = ldapschema.RowID(s.UserDN, s.EntitlementDN, s.PodDN, s.PoolDN, s.HostDN, s.ClientDN)
	}
	s.DN = st.DIT.Session(s.ID)
	return s, nil
}

func (o *sessionRecordOptions) run() error {
	if err := o.validate(); err != nil {
		return err
	}
	st, closeFn, err := o.g.Store()
	if err != nil {
		return err
	}
	defer closeFn()
	s, err := o.build(st)
	if err != nil {
		return err
	}
	existing, err := readSession(st, s.ID)
	if err == nil {
		return applyPlan(o.g, st, planUpdate(objkind.Session, s.ID, s.DN, s.Attrs().Changes(existing.Attrs(), sessionManaged...), nil),
			o.DryRun, objkind.Session+" "+s.ID)
	}
	if !directory.IsNotFound(err) {
		return err
	}
	line := fmt.Sprintf("session %s (user %s, entitlement %s, pool %s in pod %s)", s.ID, ldapschema.NameOf(s.UserDN),
		ldapschema.NameOf(s.EntitlementDN), ldapschema.NameOf(s.PoolDN), ldapschema.NameOf(s.PodDN))
	if o.DryRun {
		o.g.report("would record %s", line)
		return nil
	}
	if err := st.Add(st.Client, s.DN, s.Attrs()); err != nil {
		return existsHint(err, objkind.Session, s.ID)
	}
	o.g.report("recorded %s", line)
	return nil
}

type sessionEndOptions struct {
	g *Globals
	writeFlags
	IDs []string
}

func newSessionEndCommand(g *Globals) *cobra.Command {
	o := &sessionEndOptions{g: g}
	cmd := &cobra.Command{
		Use:   "end ID...",
		Short: "End sessions: delete their records",
		Long: `Deletes session records, as the global data layer does when a user logs off.
Every ID is checked first (a missing one exits 3 and nothing is deleted).
Ending a session is routine record keeping, so it asks no confirmation.`,
		Example: `  cpactl session end 3f2a9c0d41b7e8a65c12`,
		Args:    cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.IDs = args
			return o.g.execute(o)
		},
	}
	o.writeFlags.add(cmd)
	return cmd
}

func (o *sessionEndOptions) run() error {
	st, closeFn, err := o.g.Store()
	if err != nil {
		return err
	}
	defer closeFn()
	plan := &directory.Plan{}
	var ids []string
	for _, id := range o.IDs {
		s, err := readSession(st, id)
		if err != nil {
			return err
		}
		if firstFold(ids, s.ID) != "" {
			continue
		}
		ids = append(ids, s.ID)
		plan.Add(directory.DeleteWrite("delete", "session "+s.ID, s.DN))
	}
	verb := "ended"
	if o.DryRun {
		verb = "would end"
	} else if err := st.ApplyPlan(plan); err != nil {
		return err
	}
	for _, id := range ids {
		o.g.report("%s session %s", verb, id)
	}
	return nil
}
