package commands

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cpactl/cpactl/broker"
	"github.com/cpactl/cpactl/directory"
	"github.com/cpactl/cpactl/directory/ldapclient"
	"github.com/cpactl/cpactl/ldapschema"
	"github.com/cpactl/cpactl/output"
)

// maxStormRequests bounds --requests: far more sessions than a whole
// federation holds, and still well under a second of simulation.
const maxStormRequests = 1_000_000

// newSimulateCommand is the `simulate` noun; `storm` is its only verb.
func newSimulateCommand(g *Globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "simulate",
		Short: "What-if simulations on the federation (nothing is written)",
		Long: `Simulations that replay load on the federation as stored, or on an LDIF
snapshot with --from. They read the directory and never write to it.`,
		Args: cobra.NoArgs,
	}
	return cmd
}

type stormOptions struct {
	g *Globals
	readFlags
	Farm            string
	Requests        int
	Protocol        string
	Unauthenticated bool
	whatIf          whatIfFlags
	// What-if bucket thresholds; unset ones come from cn=Common.
	LIT, CST, MIN whatIfInt
}

// whatIfInt is an integer flag that remembers whether it was given, so a
// threshold the admin did not pass comes from the directory instead.
type whatIfInt struct {
	value int
	set   bool
}

func (v *whatIfInt) String() string {
	if !v.set {
		return ""
	}
	return strconv.Itoa(v.value)
}

func (v *whatIfInt) Set(s string) error {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil {
		return fmt.Errorf("%q is not an integer", s)
	}
	v.value, v.set = n, true
	return nil
}

func (v *whatIfInt) Type() string { return "int" }

// stormThresholdFlags ties each what-if flag to the cn=Common setting it
// overrides; the setting's definition holds the accepted range.
var stormThresholdFlags = []struct {
	label, flag, attr string
	opt               func(*stormOptions) *whatIfInt
}{
	{"LIT", "lit", ldapschema.AttrRDSLoadIndexThreshold, func(o *stormOptions) *whatIfInt { return &o.LIT }},
	{"CST", "cst", ldapschema.AttrRDSConnectingSessionThreshold, func(o *stormOptions) *whatIfInt { return &o.CST }},
	{"MIN", "min", ldapschema.AttrMinRDSServersInLBQueue, func(o *stormOptions) *whatIfInt { return &o.MIN }},
}

func newSimulateStormCommand(g *Globals) *cobra.Command {
	o := &stormOptions{g: g}
	cmd := &cobra.Command{
		Use:   "storm --farm FARM --requests N",
		Short: "Replay a logon storm on an RDS farm: who takes each session, and the naive alternative",
		Long: `Replays N near-simultaneous new-session requests on one RDS farm the way the
Connection Server spreads them over its three host buckets: load indexes stay as
stored, since hosts report them every 30 seconds and they are stale during a
storm; each placement adds one connecting session and one session to the
host that takes it, which moves hosts between the three buckets and, at the
farm's host-side thresholds or session limit, makes them refuse logons.

The bucket thresholds come from cn=Common (pae-RDSLoadIndexThreshold,
pae-RDSConnectingSessionThreshold, pae-MinRDSServersInLBQueue, defaults
when absent) unless --lit, --cst or --min override them: a what-if to tune
them before users feel it. The what-ifs of resolve lay data over the
directory in memory too: --host-load HOST=LOADINDEX[,connecting=N][,sessions=N]
replays the storm from other host figures, --setting KEY=VALUE changes
cn=Common, --with FILE.ldif lays a federation or a change set over it; the
report lists them (what_if in JSON). Nothing is written.

The table shows each host's share with a bar chart, its bucket before and
after the burst, its counters and why it refuses logons afterwards; the
moves between buckets with the request that caused them; the requests that
found no host; and the same burst placed naively (every request on the
candidate with the lowest load index), the pile-up the buckets prevent.
-o json and -o yaml print the full report (see docs/storm.md).

Exit codes: 0 whatever the outcome (unplaced requests are a result, not an
error), 3 when the farm does not exist, 1 on bad flags or other errors.`,
		Example: `  # 400 users logging on at 9:00 on farm rds-paris
  cpactl simulate storm --farm rds-paris --requests 400

  # what if the connecting session threshold were 10 and bucket 1 kept 6 hosts?
  cpactl simulate storm --farm rds-paris --requests 400 --cst 10 --min 6

  # Blast clients only, on a snapshot, as JSON
  cpactl simulate storm --from backup.ldif --farm rds-paris --requests 400 --protocol blast -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.validate(); err != nil {
				return err
			}
			return o.g.execute(o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Farm, "farm", "", "the RDS farm (required)")
	f.IntVar(&o.Requests, "requests", 0, fmt.Sprintf("number of near-simultaneous requests, 1-%d (required)", maxStormRequests))
	f.StringVar(&o.Protocol, "protocol", "", "blast, pcoip or rdp: hosts must support it (default: none required)")
	f.BoolVar(&o.Unauthenticated, "unauthenticated", false, "unauthenticated users: hosts must support unauthenticated access")
	for _, t := range stormThresholdFlags {
		set, _ := ldapschema.LookupSetting(t.attr)
		f.Var(t.opt(o), t.flag, fmt.Sprintf("what-if %s, %s (default: the value in cn=Common)", t.attr, set.Range()))
	}
	o.whatIf.add(cmd)
	_ = f.MarkHidden("offline-pod") // refused: a storm has no pods to search
	o.readFlags.add(cmd)
	return cmd
}

// validate checks every flag before any I/O.
func (o *stormOptions) validate() error {
	if _, err := output.ParseFormat(o.Output); err != nil {
		return errorf("", "%v", err)
	}
	if o.Farm == "" {
		return errorf("", "--farm is required: name the RDS farm to replay the storm on")
	}
	if len(o.whatIf.OfflinePods) > 0 {
		return errorf("a storm replays one farm's hosts: to see where sessions go without a pod, use `cpactl resolve --offline-pod`",
			"--offline-pod does not apply to simulate storm")
	}
	if o.Requests < 1 || o.Requests > maxStormRequests {
		return errorf("", "--requests %d is out of range: it takes an integer 1..%d", o.Requests, maxStormRequests)
	}
	if _, err := o.protocol(); err != nil {
		return err
	}
	for _, t := range stormThresholdFlags {
		v := t.opt(o)
		set, _ := ldapschema.LookupSetting(t.attr)
		if v.set && (v.value < set.Min || v.value > set.Max) {
			return errorf("", "--%s %d is out of range: it takes an integer %s (like %s)", t.flag, v.value, set.Range(), t.attr)
		}
	}
	return o.whatIf.validate()
}

func (o *stormOptions) protocol() (broker.Protocol, error) {
	if o.Protocol == "" {
		return "", nil
	}
	if p, ok := ldapschema.Canonical(ldapschema.ProtocolAliases, o.Protocol); ok {
		return broker.Protocol(p), nil
	}
	return "", errorf("", "--protocol %q: use blast, pcoip or rdp", o.Protocol)
}

// run reads the settings, the farm and its hosts (three bounded reads),
// replays the storm and prints the report.
func (o *stormOptions) run() error {
	p, err := o.printer(o.g)
	if err != nil {
		return err
	}
	proto, err := o.protocol()
	if err != nil {
		return err
	}
	base, closeFn, err := o.g.ReadStore(o.From)
	if err != nil {
		return err
	}
	defer closeFn()
	st, whatIfs, _, err := o.whatIf.overlay(base)
	if err != nil {
		return err
	}
	settings, err := st.Settings()
	if err != nil {
		return err
	}
	farm, err := st.Farm(o.Farm)
	if err != nil {
		if _, ok := err.(*ldapclient.NotFoundError); ok {
			return &Failure{Code: ExitNotFound, Err: err, Hint: "`cpactl farm list` lists the farms"}
		}
		return err
	}
	pod, err := st.Pod(farm.Pod)
	if err != nil {
		return err
	}
	records, err := st.Hosts(farm.DN)
	if err != nil {
		return err
	}
	hosts := make([]broker.Host, 0, len(records))
	for _, h := range records {
		hosts = append(hosts, directory.BrokerHost(h))
	}

	bpod := directory.BrokerPod(pod)
	t, sources := broker.ThresholdsFor(directory.BrokerSettings(settings), &bpod)
	view := stormView{Farm: directory.BrokerFarm(farm), Pod: pod.Name, Thresholds: o.thresholds(t, sources)}
	t.LIT, t.CST, t.MIN = view.Thresholds[0].Value, view.Thresholds[1].Value, view.Thresholds[2].Value
	view.Report = broker.SimulateStorm(view.Farm, hosts, broker.HostRequest{Protocol: proto, Unauthenticated: o.Unauthenticated},
		t, o.Requests)
	for _, th := range view.Thresholds {
		if th.Overridden {
			whatIfs = append(whatIfs, broker.WhatIf{Kind: "storm_threshold", Target: th.Flag, Value: strconv.Itoa(th.Value)})
		}
	}
	view.Report.WhatIf = whatIfs
	return p.Print(view.Report, func(w io.Writer) error { return writeStorm(w, view) })
}

// thresholds returns LIT, CST and MIN, from the flags where given, else
// the farm's in force (its pod's, the federation's or the default), saying
// where each came from.
func (o *stormOptions) thresholds(inForce broker.Thresholds, sources broker.ThresholdSources) [3]stormThreshold {
	var out [3]stormThreshold
	values := [3]int{inForce.LIT, inForce.CST, inForce.MIN}
	from := [3]broker.ThresholdSource{sources.LIT, sources.CST, sources.MIN}
	for i, t := range stormThresholdFlags {
		th := stormThreshold{Label: t.label, Flag: "--" + t.flag, Value: values[i], Stored: values[i], Source: from[i]}
		if v := t.opt(o); v.set {
			th.Value, th.Overridden = v.value, true
		}
		out[i] = th
	}
	return out
}

// stormThreshold is one bucket threshold of a storm and where it came from.
type stormThreshold struct {
	Label      string // LIT, CST, MIN
	Flag       string // the what-if flag
	Value      int    // the value the storm used
	Stored     int    // the value in force: the pod's, cn=Common's or the default
	Source     broker.ThresholdSource
	Overridden bool // the flag replaced the stored value
}

func (t stormThreshold) String() string {
	source := "cn=Common"
	switch t.Source {
	case broker.SourceDefault:
		source = "default"
	case broker.SourcePod:
		source = "pod"
	}
	if t.Overridden {
		return fmt.Sprintf("%s %d (what-if %s; %s: %d)", t.Label, t.Value, t.Flag, source, t.Stored)
	}
	return fmt.Sprintf("%s %d (%s)", t.Label, t.Value, source)
}

// stormView is what the table needs: the broker's report and the context
// it does not carry (the farm's host-side settings, the thresholds'
// sources).
type stormView struct {
	Report     broker.StormReport
	Farm       broker.Farm
	Pod        string
	Thresholds [3]stormThreshold // LIT, CST, MIN
}

// Bar chart geometry: the stormBusiest host of either placement (bucketed or
// naive) spans stormChartWidth cells, so the two charts compare directly.
const stormChartWidth = 40

// stormChartEighths are the partial blocks, one to seven eighths of a cell.
var stormChartEighths = []rune("▏▎▍▌▋▊▉")

// stormBar draws n against scale as a bar of up to stormChartWidth cells, to
// an eighth of a cell; any n > 0 shows at least an eighth.
func stormBar(n, scale int) string {
	if n <= 0 || scale <= 0 {
		return ""
	}
	eighths := (n*stormChartWidth*8 + scale/2) / scale
	eighths = max(eighths, 1)
	bar := strings.Repeat("█", eighths/8)
	if rest := eighths % 8; rest > 0 {
		bar += string(stormChartEighths[rest-1])
	}
	return bar
}

// stormMaxChanges bounds the bucket changes a table lists; -o json has them all.
const stormMaxChanges = 100

// writeStorm renders a storm for a person: summary, hosts with their
// share chart, bucket changes, requests that found no host, and the naive
// comparison.
func writeStorm(w io.Writer, v stormView) error {
	ew := &errWriter{w: w}
	r := v.Report
	f := v.Farm

	ew.printf("storm on farm %s: %d requests, %d placed, %d found no host\n", r.Farm, r.Requests, r.Placed, r.Unplaced)
	var th []string
	whatIf := false
	for _, t := range v.Thresholds {
		th = append(th, t.String())
		whatIf = whatIf || t.Overridden
	}
	ew.printf("thresholds: %s\n", strings.Join(th, ", "))
	if whatIf {
		ew.printf("  what-if: the flags override cn=Common for this simulation only; nothing is written\n")
	}
	var data []broker.WhatIf
	for _, w := range r.WhatIf {
		if w.Kind != "storm_threshold" {
			data = append(data, w)
		}
	}
	if len(data) > 0 {
		ew.printf("what-if (in memory, nothing written): %s\n", broker.DescribeWhatIfs(data))
	}
	proto := "any (none required)"
	if r.Request.Protocol != "" {
		proto = string(r.Request.Protocol)
	}
	unauth := "no"
	if r.Request.Unauthenticated {
		unauth = "yes (hosts must support unauthenticated access)"
	}
	ew.printf("request: protocol %s, unauthenticated %s\n", proto, unauth)
	ew.printf("farm: max sessions per host %s, host-side load index threshold %s, connecting session threshold %s\n",
		stormZeroAs(f.MaxSessionsPerHost, "unlimited"), stormZeroAs(f.LoadIndexThreshold, "off"), stormZeroAs(f.ConnectingSessionThreshold, "off"))
	for _, h := range r.Hosts {
		if t := h.HostThresholds; t != nil {
			ew.printf("host %s: load index threshold %s (%s), connecting session threshold %s (%s)\n", h.Host,
				offOr(t.LoadIndexThreshold, "off"), t.LoadIndexSource, offOr(t.ConnectingSessionThreshold, "off"), t.ConnectingSessionSource)
		}
	}
	ew.printf("served by bucket 1: %d, bucket 2: %d, bucket 3: %d\n", r.ServedBy.Bucket1, r.ServedBy.Bucket2, r.ServedBy.Bucket3)

	scale := 0
	for _, h := range r.Hosts {
		scale = max(scale, h.Placed)
	}
	for _, h := range r.Naive.Hosts {
		scale = max(scale, h.Placed)
	}
	ew.printf("busiest host: %s; naively: %s\n", stormBusiest(r.Hosts), stormBusiestNaive(r.Naive.Hosts))

	chart := ""
	if scale > 0 {
		chart = fmt.Sprintf("; chart: %d cells = %d requests", stormChartWidth, scale)
	}
	ew.printf("\nHOSTS (bucket: before the burst, then after each move; - = not a candidate%s)\n", chart)
	if len(r.Hosts) == 0 {
		ew.printf("  the farm has no hosts\n")
	} else {
		rows := make([][]string, 0, len(r.Hosts))
		for _, h := range r.Hosts {
			rows = append(rows, []string{h.Host, strconv.Itoa(h.Placed), stormShare(h.SharePercent), stormBar(h.Placed, scale),
				stormBucketPath(h), stormLoadIndex(h.LoadIndex),
				stormCounterMove(h.FinalConnecting-h.Placed, h.FinalConnecting), stormCounterMove(h.FinalSessions-h.Placed, h.FinalSessions),
				h.Refused})
		}
		ew.rows([]string{"host", "placed", "share", "chart", "bucket", "load index", "connecting", "sessions", "refused"}, rows)
	}

	ew.printf("\nBUCKET CHANGES DURING THE BURST\n")
	writeStormChanges(ew, r.Hosts)

	ew.printf("\nREQUESTS THAT FOUND NO HOST\n")
	ew.printf("  %s\n", stormUnplaced(r.Requests, r.Unplaced, r.FirstUnplaced, len(r.Hosts), "see \"refused\" above"))

	ew.printf("\nNAIVE COMPARISON (each request on the candidate with the lowest load index, ties by name; no buckets)\n")
	ew.printf("  %d placed, %d found no host\n", r.Naive.Placed, r.Naive.Unplaced)
	var rows [][]string
	idle := 0
	for _, h := range r.Naive.Hosts {
		if h.Placed == 0 {
			idle++
			continue
		}
		rows = append(rows, []string{h.Host, strconv.Itoa(h.Placed), stormShare(h.SharePercent), stormBar(h.Placed, scale)})
	}
	if len(rows) > 0 {
		ew.rows([]string{"host", "placed", "share", "chart"}, rows)
	}
	if idle > 0 {
		ew.printf("  %s took none\n", stormPlural(idle, "other host", "other hosts"))
	}
	if r.Naive.Unplaced > 0 {
		ew.printf("  %s\n", stormUnplaced(r.Requests, r.Naive.Unplaced, r.Naive.FirstUnplaced, len(r.Naive.Hosts), "every host was at its session limit or refused logons"))
	}
	return ew.err
}

// writeStormChanges lists the moves in request order, at most stormMaxChanges.
func writeStormChanges(ew *errWriter, hosts []broker.StormHost) {
	type change struct {
		host string
		broker.BucketChange
	}
	var all []change
	for _, h := range hosts {
		for _, c := range h.BucketChanges {
			all = append(all, change{h.Host, c})
		}
	}
	if len(all) == 0 {
		ew.printf("  none: every host stayed in its bucket\n")
		return
	}
	// Hosts are in name order, so a stable sort keeps name order within
	// one request.
	sort.SliceStable(all, func(i, j int) bool { return all[i].Request < all[j].Request })
	shown := all[:min(len(all), stormMaxChanges)]
	rows := make([][]string, 0, len(shown))
	for _, c := range shown {
		rows = append(rows, []string{strconv.Itoa(c.Request), c.host, stormBucket(c.From) + " → " + stormBucket(c.To), stormChangeWhy(c.Why)})
	}
	ew.rows([]string{"after request", "host", "bucket", "why"}, rows)
	if rest := len(all) - len(shown); rest > 0 {
		ew.printf("  ... and %s (-o json lists them all)\n", stormPlural(rest, "more change", "more changes"))
	}
}

// stormChangeWhy drops the broker's "bucket N: " or "not a candidate: " lead,
// which the bucket column already says.
func stormChangeWhy(why string) string {
	if rest, ok := strings.CutPrefix(why, "not a candidate: "); ok {
		return rest
	}
	if strings.HasPrefix(why, "bucket ") {
		if _, rest, ok := strings.Cut(why, ": "); ok {
			return rest
		}
	}
	return why
}

// stormUnplaced says which requests found no host. Counters only grow, so
// they are always the tail of the burst.
func stormUnplaced(requests, unplaced, first, hosts int, why string) string {
	if unplaced == 0 {
		return "none: every request found a host"
	}
	span := fmt.Sprintf("request %d", first)
	if unplaced > 1 {
		span = fmt.Sprintf("requests %d-%d", first, first+unplaced-1)
	}
	cause := "no host was a candidate any more (" + why + ")"
	switch {
	case hosts == 0:
		cause = "the farm has no hosts"
	case first == 1:
		cause = "no host was a candidate (" + why + ")"
	}
	return fmt.Sprintf("%s (%d of %d) found no host: %s", span, unplaced, requests, cause)
}

func stormBusiest(hosts []broker.StormHost) string {
	best, used := -1, 0
	for i, h := range hosts {
		if h.Placed > 0 {
			used++
		}
		if h.Placed > 0 && (best < 0 || h.Placed > hosts[best].Placed) {
			best = i
		}
	}
	if best < 0 {
		return "none"
	}
	h := hosts[best]
	return fmt.Sprintf("%s took %d (%s), %s took requests", h.Host, h.Placed, stormShare(h.SharePercent),
		stormPlural(used, "host", "hosts"))
}

func stormBusiestNaive(hosts []broker.NaiveHost) string {
	sh := make([]broker.StormHost, len(hosts))
	for i, h := range hosts {
		sh[i] = broker.StormHost{Host: h.Host, Placed: h.Placed, SharePercent: h.SharePercent}
	}
	return stormBusiest(sh)
}

func stormBucket(b int) string {
	if b == 0 {
		return "-"
	}
	return strconv.Itoa(b)
}

// stormBucketPath is a host's bucket before the burst and after each of
// its moves, e.g. "3 → 1 → 3": the initial and final buckets alone would
// hide a round trip.
func stormBucketPath(h broker.StormHost) string {
	path := []string{stormBucket(h.InitialBucket)}
	for _, c := range h.BucketChanges {
		path = append(path, stormBucket(c.To))
	}
	return strings.Join(path, " → ")
}

func stormCounterMove(from, to int) string {
	if from == to {
		return strconv.Itoa(to)
	}
	return fmt.Sprintf("%d → %d", from, to)
}

func stormLoadIndex(li int) string {
	if li < 0 {
		return strconv.Itoa(li) + " (off)"
	}
	return strconv.Itoa(li)
}

func stormShare(p float64) string { return strconv.FormatFloat(p, 'f', 2, 64) + "%" }

func stormZeroAs(n int, zero string) string {
	if n == 0 {
		return "0 (" + zero + ")"
	}
	return strconv.Itoa(n)
}

func stormPlural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
