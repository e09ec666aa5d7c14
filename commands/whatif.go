package commands

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cpactl/cpactl/broker"
	"github.com/cpactl/cpactl/directory"
	"github.com/cpactl/cpactl/directory/snapshot"
	"github.com/cpactl/cpactl/internal/objkind"
	"github.com/cpactl/cpactl/ldapschema"
	"github.com/cpactl/cpactl/quote"
	"github.com/cpactl/cpactl/reconcile"
	"github.com/cpactl/cpactl/rules"
)

// whatIfFlags are the what-if options of every read that decides (resolve,
// simulate storm, impact, loads): changes laid over the directory or the
// snapshot in memory, never written anywhere (docs/resolve.md "What-if").
//
// This is the shared contract of the what-if work: overlay is what a
// command calls, whatever the set of flags grows to.
type whatIfFlags struct {
	OfflinePods  []string
	With         []string // desired federations or ldapmodify change sets
	Settings     []string // KEY=VALUE, as `settings set` takes them
	PoolSessions []string // POOL=N
	HostLoads    []string // HOST=LOADINDEX[,connecting=N][,sessions=N]
	Preferred    []string // SITE=A,B (empty: no preferred site)

	errOut io.Writer      // where a refused --with file's problems are listed
	parsed *parsedWhatIfs // what validate parsed, before any I/O
}

// validate parses the what-ifs before the command reads anything, so
// that a malformed one is named rather than hidden behind a server that
// cannot be reached (no I/O: the names they give are checked by overlay).
func (w *whatIfFlags) validate() error {
	parsed, err := w.parse()
	if err != nil {
		return err
	}
	w.parsed = parsed
	return nil
}

func (w *whatIfFlags) add(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringArrayVar(&w.With, "with", nil,
		"what-if: lay FILE.ldif over the directory in memory: a federation as `cpactl export` writes it, edited, or an ldapmodify change set (repeatable)")
	f.StringArrayVar(&w.Settings, "setting", nil,
		"what-if: a setting KEY=VALUE, as `settings set` takes it, or POD:KEY=VALUE for a pod's own pae-RDS* value (repeatable)")
	f.StringArrayVar(&w.PoolSessions, "pool-sessions", nil, "what-if: a desktop pool's sessions in use, POOL=N (repeatable)")
	f.StringArrayVar(&w.HostLoads, "host-load", nil,
		"what-if: an RDS host's figures, HOST=LOADINDEX[,connecting=N][,sessions=N] (repeatable)")
	f.StringArrayVar(&w.Preferred, "preferred", nil, "what-if: a site's preferred sites in rank order, SITE=A,B (SITE= for none; repeatable)")
	f.StringArrayVar(&w.OfflinePods, "offline-pod", nil, "what-if: treat this pod as offline (repeatable)")
	w.errOut = cmd.ErrOrStderr()
}

// poolSessionsWhatIf is one --pool-sessions.
type poolSessionsWhatIf struct {
	pool     string
	sessions int
}

// hostLoadWhatIf is one --host-load; nil figures are left as stored.
type hostLoadWhatIf struct {
	host                 string
	given                string // what follows HOST=
	loadIndex            int
	connecting, sessions *int
}

// preferredWhatIf is one --preferred.
type preferredWhatIf struct {
	site  string
	sites []string
}

// podSettingsWhatIf are the --setting POD:KEY=VALUE of one pod.
type podSettingsWhatIf struct {
	pod     string
	changes []settingChange
}

// parsedWhatIfs are the shortcuts parsed, before any I/O.
type parsedWhatIfs struct {
	settings    []settingChange
	podSettings []podSettingsWhatIf
	pools       []poolSessionsWhatIf
	hosts       []hostLoadWhatIf
	preferred   []preferredWhatIf
}

// parse checks the shortcuts' syntax and the settings' ranges (no I/O).
func (w *whatIfFlags) parse() (*parsedWhatIfs, error) {
	out := &parsedWhatIfs{}
	var err error
	if out.settings, out.podSettings, err = parseWhatIfSettings(w.Settings); err != nil {
		return nil, err
	}
	for _, s := range w.PoolSessions {
		p, err := parsePoolSessions(s)
		if err != nil {
			return nil, err
		}
		out.pools = append(out.pools, p)
	}
	for _, s := range w.HostLoads {
		h, err := parseHostLoad(s)
		if err != nil {
			return nil, err
		}
		out.hosts = append(out.hosts, h)
	}
	for _, s := range w.Preferred {
		p, err := parsePreferred(s)
		if err != nil {
			return nil, err
		}
		out.preferred = append(out.preferred, p)
	}
	return out, nil
}

// parseWhatIfSettings reads each --setting as `settings set` reads its
// pairs: KEY=VALUE for cn=Common, POD:KEY=VALUE for a pod's own pae-RDS*
// value (as `settings set --pod POD KEY=VALUE`; the last ":" before the
// "=" ends the pod's name, since no setting's name holds one).
func parseWhatIfSettings(pairs []string) ([]settingChange, []podSettingsWhatIf, error) {
	var federal []string
	var pods []string              // in the order first given
	byPod := map[string][]string{} // pod as first given -> its pairs
	for _, pair := range pairs {
		key, _, _ := strings.Cut(pair, "=")
		i := strings.LastIndex(key, ":")
		if i <= 0 {
			federal = append(federal, pair)
			continue
		}
		pod := pair[:i]
		if first := firstFold(pods, pod); first != "" {
			pod = first
		} else {
			pods = append(pods, pod)
		}
		byPod[pod] = append(byPod[pod], pair[i+1:])
	}
	var settings []settingChange
	var err error
	if len(federal) > 0 {
		if settings, err = parseSettingPairs(federal); err != nil {
			return nil, nil, err
		}
	}
	var out []podSettingsWhatIf
	for _, pod := range pods {
		changes, err := parseSettingPairs(byPod[pod])
		if err != nil {
			return nil, nil, err
		}
		for _, c := range changes {
			if err := rules.PodSetting(c.set); err != nil {
				return nil, nil, refused(err)
			}
		}
		out = append(out, podSettingsWhatIf{pod: pod, changes: changes})
	}
	return settings, out, nil
}

// parsePoolSessions reads POOL=N; the last "=" ends the name (names may
// hold "=").
func parsePoolSessions(s string) (poolSessionsWhatIf, error) {
	i := strings.LastIndex(s, "=")
	if i <= 0 {
		return poolSessionsWhatIf{}, errorf("write --pool-sessions POOL=N, e.g. --pool-sessions uk-desktops=40", "--pool-sessions %q is not POOL=N", s)
	}
	n, err := strconv.Atoi(strings.TrimSpace(s[i+1:]))
	if err != nil {
		return poolSessionsWhatIf{}, errorf("write --pool-sessions POOL=N, e.g. --pool-sessions uk-desktops=40",
			"--pool-sessions %q: %q is not an integer", s, s[i+1:])
	}
	return poolSessionsWhatIf{pool: s[:i], sessions: n}, nil
}

// hostLoadSyntax is HOST=LOADINDEX[,connecting=N][,sessions=N]: the name
// is what precedes the first "=" that starts such a tail, whatever it
// holds (a newline too: (?s)).
var hostLoadSyntax = regexp.MustCompile(`(?s)^(.+?)=(-?[0-9]+)((?:,(?:connecting|sessions)=-?[0-9]+)*)$`)

func parseHostLoad(s string) (hostLoadWhatIf, error) {
	const hint = "write --host-load HOST=LOADINDEX[,connecting=N][,sessions=N], e.g. --host-load rds-01=85,connecting=3"
	m := hostLoadSyntax.FindStringSubmatch(s)
	if m == nil {
		return hostLoadWhatIf{}, errorf(hint, "--host-load %q is not HOST=LOADINDEX[,connecting=N][,sessions=N]", s)
	}
	h := hostLoadWhatIf{host: m[1], given: s[len(m[1])+1:]}
	var err error
	if h.loadIndex, err = strconv.Atoi(m[2]); err != nil { // out of range
		return hostLoadWhatIf{}, errorf(hint, "--host-load %q: %s is not an integer in range", s, m[2])
	}
	for _, part := range strings.Split(strings.TrimPrefix(m[3], ","), ",") {
		if part == "" {
			continue
		}
		key, val, _ := strings.Cut(part, "=")
		v, err := strconv.Atoi(val)
		if err != nil {
			return hostLoadWhatIf{}, errorf(hint, "--host-load %q: %s=%s is not an integer in range", s, key, val)
		}
		target := &h.connecting
		if key == "sessions" {
			target = &h.sessions
		}
		if *target != nil {
			return hostLoadWhatIf{}, errorf(hint, "--host-load %q gives %s twice", s, key)
		}
		*target = &v
	}
	return h, nil
}

// parsePreferred reads SITE=A,B: the first "=" ends the site's name; the
// list is CSV, as `site preferred --set` takes it ('"R&D, West",UK').
func parsePreferred(s string) (preferredWhatIf, error) {
	site, list, ok := strings.Cut(s, "=")
	if !ok || strings.TrimSpace(site) == "" {
		return preferredWhatIf{}, errorf("write --preferred SITE=A,B (SITE= for no preferred site)", "--preferred %q is not SITE=A,B", s)
	}
	p := preferredWhatIf{site: site}
	if strings.TrimSpace(list) == "" {
		return p, nil
	}
	r := csv.NewReader(strings.NewReader(list))
	r.TrimLeadingSpace = true // as --set reads it: UK, "R&D, West"
	names, err := r.Read()
	if err == nil {
		if _, next := r.Read(); next != io.EOF { // a second line was dropped
			err = errors.New("a newline outside quotes")
		}
	}
	if err != nil {
		return preferredWhatIf{}, errorf("quote names holding commas as CSV does: --preferred 'India=\"R&D, West\",UK'",
			"--preferred %q: %v", s, err)
	}
	p.sites = cleanList(names)
	if err := rules.PreferredSites(site, p.sites); err != nil {
		return preferredWhatIf{}, refused(err)
	}
	return p, nil
}

// overlay returns the store a decision reads: base itself when no what-if
// changes data, else base with the what-ifs laid over it in memory (base is
// never written). list says which what-ifs are in force: the --with files
// in the order given, then --setting, --pool-sessions, --host-load,
// --preferred and --offline-pod, each in the order given (a later one wins
// over an earlier one on the same value); offline are the pods to treat as
// offline in every request (they are a request option of the broker, not
// data).
func (w *whatIfFlags) overlay(base *directory.Store) (st *directory.Store, list []broker.WhatIf, offline []string, err error) {
	parsed := w.parsed
	if parsed == nil {
		if parsed, err = w.parse(); err != nil {
			return nil, nil, nil, err
		}
	}
	list = []broker.WhatIf{}
	st = base
	if len(w.With)+len(parsed.settings)+len(parsed.podSettings)+len(parsed.pools)+len(parsed.hosts)+len(parsed.preferred) > 0 {
		ov := snapshot.NewOverlay(base.Client)
		st = directory.NewStore(ov, base.DIT.Base)
		st.Note = base.Note
		if list, err = w.lay(st, ov, parsed); err != nil {
			return nil, nil, nil, err
		}
	}
	for _, p := range w.OfflinePods {
		list = append(list, broker.WhatIf{Kind: "offline_pod", Target: p})
	}
	return st, list, w.OfflinePods, nil
}

// lay makes every data what-if an entry-level change of ov, reading
// through st (ov's store), so that a shortcut may name an object a --with
// file adds.
func (w *whatIfFlags) lay(st *directory.Store, ov *snapshot.Overlay, parsed *parsedWhatIfs) ([]broker.WhatIf, error) {
	list := []broker.WhatIf{}
	for _, file := range w.With {
		what, err := w.layFile(st, ov, file)
		if err != nil {
			return nil, err
		}
		list = append(list, broker.WhatIf{Kind: "with", Target: file, Value: what})
	}
	for _, c := range parsed.settings {
		if err := ov.Replace("settings entry", "cn=Common", st.DIT.Settings(), c.set.Attr, []string{strconv.Itoa(c.value)}); err != nil {
			return nil, err
		}
		list = append(list, broker.WhatIf{Kind: "setting", Target: c.set.Attr, Value: strconv.Itoa(c.value)})
	}
	for _, ps := range parsed.podSettings {
		pod, err := st.Pod(ps.pod)
		if err != nil {
			return nil, err
		}
		for _, c := range ps.changes {
			if err := ov.Replace(objkind.Pod, pod.Name, pod.DN, c.set.Attr, []string{strconv.Itoa(c.value)}); err != nil {
				return nil, err
			}
			list = append(list, broker.WhatIf{Kind: "pod_setting", Target: pod.Name, Value: c.set.Attr + "=" + strconv.Itoa(c.value)})
		}
	}
	for _, p := range parsed.pools {
		pool, err := st.Pool(p.pool)
		if err != nil {
			return nil, err
		}
		if err := rules.PoolFigures(pool, func(field string) bool { return field == "sessions" }); err != nil {
			return nil, refused(err)
		}
		next := pool
		next.Sessions = p.sessions
		if err := rules.Refusal(objkind.Pool, pool.Name, rules.Pool(next)); err != nil {
			return nil, refused(err)
		}
		if err := ov.Replace(objkind.Pool, pool.Name, pool.DN, ldapschema.AttrSessions, []string{strconv.Itoa(p.sessions)}); err != nil {
			return nil, err
		}
		list = append(list, broker.WhatIf{Kind: "pool_sessions", Target: pool.Name, Value: strconv.Itoa(p.sessions)})
	}
	for _, h := range parsed.hosts {
		host, err := st.Host(h.host)
		if err != nil {
			return nil, err
		}
		next := host
		next.LoadIndex = h.loadIndex
		figures := map[string]int{ldapschema.AttrLoadIndex: h.loadIndex}
		if h.connecting != nil {
			next.Connecting, figures[ldapschema.AttrConnectingSessions] = *h.connecting, *h.connecting
		}
		if h.sessions != nil {
			next.Sessions, figures[ldapschema.AttrSessions] = *h.sessions, *h.sessions
		}
		if err := rules.Refusal(objkind.Host, host.Name, rules.Host(next)); err != nil {
			return nil, refused(err)
		}
		for _, attr := range []string{ldapschema.AttrLoadIndex, ldapschema.AttrConnectingSessions, ldapschema.AttrSessions} {
			if v, ok := figures[attr]; ok {
				if err := ov.Replace(objkind.Host, host.Name, host.DN, attr, []string{strconv.Itoa(v)}); err != nil {
					return nil, err
				}
			}
		}
		list = append(list, broker.WhatIf{Kind: "host_load", Target: host.Name, Value: h.given})
	}
	for _, p := range parsed.preferred {
		site, err := st.Site(p.site)
		if err != nil {
			return nil, err
		}
		var names []string
		for _, n := range p.sites {
			s, err := st.Site(n)
			if err != nil {
				return nil, err // a missing site: exit 3
			}
			if err := rules.PreferredSite(site, s, n); err != nil {
				return nil, refused(err)
			}
			names = append(names, s.Name)
		}
		if err := ov.Replace(objkind.Site, site.Name, site.DN, ldapschema.AttrPreferredSite,
			ldapschema.EncodePreferredSites(names)); err != nil {
			return nil, err
		}
		list = append(list, broker.WhatIf{Kind: "preferred", Target: site.Name, Value: strings.Join(names, ",")})
	}
	return list, nil
}

// layFile lays one --with file over ov and says what it held. A file of
// entries is a desired federation, checked as `cpactl apply` checks it
// (same messages) and laid as apply without --prune would write it: every
// entry it adds or changes replaces the directory's, objects only the
// directory holds stay. A file with change records is an ldapmodify change
// set, applied record by record; the entries it adds or changes must be
// cpactl's objects, as apply requires.
func (w *whatIfFlags) layFile(st *directory.Store, ov *snapshot.Overlay, file string) (string, error) {
	errOut := w.errOut
	if errOut == nil {
		errOut = io.Discard
	}
	check := fileCheck{errOut: errOut, file: file, warn: func(string, ...any) {}}
	changeSet, err := snapshot.IsChangeSet(file)
	if err != nil {
		return "", errorf("pass an LDIF file: a federation as `cpactl export` writes it, or an ldapmodify change set", "--with %v", err)
	}
	if changeSet {
		n, err := ov.ApplyChangeSet(file)
		if err != nil {
			return "", errorf("correct the change set: each record must apply to the directory as ldapmodify would apply it", "--with %v", err)
		}
		state, err := reconcile.NewStateFrom(st.DIT, ov.EachChanged)
		if err != nil {
			return "", err
		}
		if problems := append(append([]reconcile.Problem(nil), state.Problems...), state.Foreign...); len(problems) > 0 {
			return "", check.refuse(problems, "correct the file: it may hold only cpactl's objects and containers under the base (check -b)")
		}
		return fmt.Sprintf("change set, %d %s", n, plural(n, "record", "records")), nil
	}
	_, desired, err := check.desiredState(st.DIT.Base)
	if err != nil {
		var f *Failure
		if errors.As(err, &f) && strings.Contains(f.Hint, "--force") {
			f.Hint = fmt.Sprintf("correct the file (`cpactl lint --from %s` names each fix)", quote.Shell(file))
		}
		return "", err
	}
	_, report, err := check.plan(st, desired, false)
	if err != nil {
		return "", err
	}
	for _, c := range report.Entries {
		if attrs := c.DesiredAttrs(); attrs != nil {
			ov.Put(c.DN, attrs)
		}
	}
	return fmt.Sprintf("federation, %d added, %d changed", report.Summary.Added, report.Summary.Changed), nil
}
