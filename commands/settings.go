package commands

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cpactl/cpactl/broker"
	"github.com/cpactl/cpactl/directory"
	"github.com/cpactl/cpactl/ldapschema"
	"github.com/cpactl/cpactl/output"
	"github.com/cpactl/cpactl/rules"
)

func newSettingsCommand(g *Globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "settings",
		Short: "Show and change the five federation-wide settings of cn=Common",
		Long: "The global settings are Horizon's own attributes of cn=Common,ou=Global,ou=Properties:\n\n" + settingsTable() +
			"\nThe three pae-RDS* values may also be set per pod (--pod POD): that pod's farms use\n" +
			"them before cn=Common's and the defaults (docs/storm.md).",
	}
	return cmd
}

func settingsTable() string {
	var b strings.Builder
	for _, s := range ldapschema.Settings {
		fmt.Fprintf(&b, "  %-34s %-34s %-8s default %-4d %s\n", s.Attr, s.Alias, s.Range(), s.Default, s.UsedBy)
	}
	return b.String()
}

// SettingView is one setting as `settings show` prints it (JSON contract).
type SettingView struct {
	Name      string `json:"name"`
	Alias     string `json:"alias"`
	Value     int    `json:"value"`
	Default   int    `json:"default"`
	IsDefault bool   `json:"is_default"`
	Min       int    `json:"min"`
	Max       int    `json:"max"`
	UsedBy    string `json:"used_by"`
	// Source is where the value in force comes from (pod, federation,
	// default); given by `settings show --pod` only.
	Source string `json:"source,omitempty"`
}

type settingsShowOptions struct {
	g *Globals
	readFlags
	Pod string
}

func newSettingsShowCommand(g *Globals) *cobra.Command {
	o := &settingsShowOptions{g: g}
	cmd := &cobra.Command{
		Use:   "show",
		Short: "Print each setting's effective value, its default and whether the default is in force",
		Long: `Prints each setting of cn=Common with its effective value. With --pod, prints
the three pae-RDS* values in force for that pod's farms, each with its
source: pod (the pod's own value), federation (cn=Common) or default.`,
		Example: `  cpactl settings show
  cpactl settings show -o json | jq '.[] | select(.is_default | not)'
  cpactl settings show --pod PAR-1`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return o.g.execute(o) },
	}
	cmd.Flags().StringVar(&o.Pod, "pod", "", "the values in force for this pod's farms, with their sources")
	o.readFlags.add(cmd)
	return cmd
}

func (o *settingsShowOptions) run() error {
	p, st, closeFn, err := o.open(o.g)
	if err != nil {
		return err
	}
	defer closeFn()
	rec, err := st.Settings()
	if err != nil {
		return err
	}
	var pod *ldapschema.Pod
	if o.Pod != "" {
		x, err := st.Pod(o.Pod)
		if err != nil {
			return err
		}
		pod = &x
	}
	views := make([]SettingView, 0, len(ldapschema.Settings))
	for _, s := range ldapschema.Settings {
		if pod != nil && !s.PerPod {
			continue
		}
		v, isDefault := rec.Value(s)
		view := SettingView{Name: s.Attr, Alias: s.Alias, Value: v, Default: s.Default,
			IsDefault: isDefault, Min: s.Min, Max: s.Max, UsedBy: s.UsedBy}
		if pod != nil {
			view.Value, view.Source = podSettingValue(rec, *pod, s)
			view.IsDefault = view.Source == string(broker.SourceDefault)
		}
		views = append(views, view)
	}
	return p.Print(views, func(w io.Writer) error {
		rows := make([][]string, 0, len(views))
		for _, v := range views {
			source := "set"
			if v.IsDefault {
				source = "default"
			}
			if v.Source != "" {
				source = v.Source
			}
			rows = append(rows, []string{v.Name, strconv.Itoa(v.Value), strconv.Itoa(v.Default), source,
				fmt.Sprintf("%d..%d", v.Min, v.Max)})
		}
		return output.Rows(w, []string{"setting", "value", "default", "source", "range"}, rows)
	})
}

type settingsSetOptions struct {
	g *Globals
	writeFlags
	Pairs []string
	Pod   string
}

// podSettingValue is a per-pod setting's value in force for pod: the
// pod's own, else the federation's, else the default, with that source.
func podSettingValue(rec ldapschema.SettingsRecord, pod ldapschema.Pod, s ldapschema.Setting) (int, string) {
	if v, ok := pod.RDS[s.Attr]; ok {
		return v, string(broker.SourcePod)
	}
	v, isDefault := rec.Value(s)
	if isDefault {
		return v, string(broker.SourceDefault)
	}
	return v, string(broker.SourceFederation)
}

func newSettingsSetCommand(g *Globals) *cobra.Command {
	o := &settingsSetOptions{g: g}
	cmd := &cobra.Command{
		Use:   "set KEY=VALUE...",
		Short: "Change settings; every pair is validated before any is written, all in one modify",
		Long: `Sets one or more settings. KEY is Horizon's attribute name or its kebab-case
alias:

` + settingsTable() + `
Every pair is validated first; if any is wrong nothing is written (exit 1).
All pairs are written in one modify. Values equal to the stored ones are
reported as unchanged.

With --pod POD the three pae-RDS* values are written on the pod's entry
instead: that pod's farms use them, before cn=Common's and the defaults
(the other two settings are federation-wide only and are refused).`,
		Example: `  cpactl settings set pae-LoadThresholdForSite=90
  cpactl settings set rds-load-index-threshold=30 min-rds-servers-in-lb-queue=6 --dry-run
  cpactl settings set --pod PAR-1 pae-MinRDSServersInLBQueue=2`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Pairs = args
			return o.g.execute(o)
		},
	}
	cmd.Flags().StringVar(&o.Pod, "pod", "", "write the values on this pod's entry (pae-RDS* settings only)")
	o.writeFlags.add(cmd)
	return cmd
}

func (o *settingsSetOptions) run() error {
	changes, err := parseSettingPairs(o.Pairs)
	if err != nil {
		return err
	}
	if o.Pod != "" {
		for _, c := range changes {
			if err := rules.PodSetting(c.set); err != nil {
				return refused(err)
			}
		}
	}
	st, closeFn, err := o.g.Store()
	if err != nil {
		return err
	}
	defer closeFn()
	target, err := settingsTargetOf(st, o.Pod)
	if err != nil {
		return err
	}
	return applySettings(o.g, st, o.DryRun, target, func(rec ldapschema.SettingsRecord, next ldapschema.Attrs) {
		for _, c := range changes {
			next.SetInt(c.set.Attr, c.value)
		}
	}, attrsOf(changes))
}

func attrsOf(changes []settingChange) []string {
	out := make([]string, len(changes))
	for i, c := range changes {
		out[i] = c.set.Attr
	}
	return out
}

// settingsTarget is the entry a settings write changes: cn=Common, or a
// pod's entry with the federation's values behind it.
type settingsTarget struct {
	dn      string
	pod     string                    // "" for cn=Common
	federal ldapschema.SettingsRecord // cn=Common, for a pod
}

// settingsTargetOf finds the entry: cn=Common, or pod's.
func settingsTargetOf(st *directory.Store, pod string) (settingsTarget, error) {
	if pod == "" {
		return settingsTarget{dn: st.DIT.Settings()}, nil
	}
	p, err := st.Pod(pod)
	if err != nil {
		return settingsTarget{}, err
	}
	rec, err := st.Settings()
	if err != nil {
		return settingsTarget{}, err
	}
	return settingsTarget{dn: p.DN, pod: p.Name, federal: rec}, nil
}

// inherited is the value and source a setting takes when the target
// stores none: the default for cn=Common; cn=Common's, else the default,
// for a pod.
func (t settingsTarget) inherited(set ldapschema.Setting) (int, string) {
	if t.pod == "" {
		return set.Default, "default"
	}
	v, isDefault := t.federal.Value(set)
	if isDefault {
		return v, "default"
	}
	return v, "federation"
}

// applySettings reads the target entry, lets edit set the new values of
// the managed attributes, and writes the difference in one modify.
func applySettings(g *Globals, st *directory.Store, dryRun bool, target settingsTarget, edit func(ldapschema.SettingsRecord, ldapschema.Attrs), managed []string) error {
	e, err := st.Entry(target.dn)
	if err != nil {
		return err
	}
	if e == nil {
		if target.pod == "" {
			// A wrong base or a missing layout: exit 3 as for a read.
			if _, err := st.Settings(); err != nil {
				return err
			}
		}
		return errorf("run `cpactl init` first", "the settings entry %s does not exist", target.dn)
	}
	rec, err := ldapschema.SettingsFromEntry(e)
	if err != nil {
		return err
	}
	old := ldapschema.AttrsOf(e)
	next := ldapschema.Attrs{}
	for _, name := range managed {
		if v, ok := rec.Stored[name]; ok {
			next.SetInt(name, v)
		}
	}
	edit(rec, next)
	changes := next.Changes(old, managed...)
	if len(changes) == 0 {
		if target.pod != "" {
			g.report("settings of pod %s: unchanged", target.pod)
		} else {
			g.report("settings: unchanged")
		}
		return nil
	}
	// The lines say what changed only once the server has taken it.
	var lines []string
	for _, name := range managed {
		set, _ := ldapschema.LookupSetting(name)
		fallback, source := target.inherited(set)
		before, stored := rec.Stored[name]
		if !stored {
			before = fallback
		}
		after := fallback
		if v := next[name]; len(v) > 0 {
			after, _ = strconv.Atoi(v[0])
		}
		if stored == (len(next[name]) > 0) && before == after {
			continue
		}
		suffix := ""
		if len(next[name]) == 0 {
			suffix = " (" + source + ")"
		}
		if target.pod != "" {
			name += " of pod " + target.pod
		}
		lines = append(lines, fmt.Sprintf("%s: %d -> %d%s", name, before, after, suffix))
	}
	// The one write of the write road (a plan), with the lines above
	// instead of the plan's: the refusal and a conflict name the entry.
	verb := "set"
	plan := &directory.Plan{Conflict: st.DIT.Describe(e.DN)}
	plan.Add(directory.ModifyWrite("change", st.DIT.Describe(e.DN), e.DN, changes))
	if dryRun {
		verb = "would set"
	} else if err := st.ApplyPlan(plan); err != nil {
		return err
	}
	for _, l := range lines {
		g.report("%s %s", verb, l)
	}
	return nil
}

type settingsResetOptions struct {
	g *Globals
	writeFlags
	Keys []string
	Pod  string
	All  bool
}

func newSettingsResetCommand(g *Globals) *cobra.Command {
	o := &settingsResetOptions{g: g}
	cmd := &cobra.Command{
		Use:   "reset (KEY... | --all)",
		Short: "Return settings to their defaults (removes the stored values)",
		Long: `Removes the stored values: cn=Common's settings return to their defaults.
With --pod POD, removes the pod's own pae-RDS* values: its farms return to
the federation's values (or the defaults).

--all resets every setting (with --pod: the pod's three pae-RDS* values).
A key is a setting's name or its alias: ` + settingKeys(false) + `.`,
		Example: `  cpactl settings reset pae-LoadThresholdForSite
  cpactl settings reset --all --dry-run
  cpactl settings reset --pod PAR-1 min-rds-servers-in-lb-queue`,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Keys = args
			return o.g.execute(o)
		},
	}
	cmd.Flags().StringVar(&o.Pod, "pod", "", "remove the values from this pod's entry (pae-RDS* settings only)")
	cmd.Flags().BoolVar(&o.All, "all", false, "reset every setting (with --pod: the pod's pae-RDS* values)")
	o.writeFlags.add(cmd)
	return cmd
}

// settingKeys lists the settings a reset takes, as "name (alias)"; perPod
// keeps those a pod may hold.
func settingKeys(perPod bool) string {
	var keys []string
	for _, s := range ldapschema.Settings {
		if !perPod || s.PerPod {
			keys = append(keys, s.Attr+" ("+s.Alias+")")
		}
	}
	return strings.Join(keys, ", ")
}

func (o *settingsResetOptions) validate() error {
	switch {
	case o.All && len(o.Keys) > 0:
		return errorf("pass the keys or --all", "--all resets every setting: it takes no key")
	case !o.All && len(o.Keys) == 0:
		return errorf("pass --all to reset every setting", "settings reset needs a key: %s", settingKeys(o.Pod != ""))
	}
	return nil
}

func (o *settingsResetOptions) run() error {
	if err := o.validate(); err != nil {
		return err
	}
	var managed []string
	if o.All {
		for _, set := range ldapschema.Settings {
			if o.Pod == "" || set.PerPod {
				managed = append(managed, set.Attr)
			}
		}
	}
	for _, k := range o.Keys {
		set, ok := ldapschema.LookupSetting(k)
		if !ok {
			return unknownSetting(k, "cpactl settings --help")
		}
		if o.Pod != "" {
			if err := rules.PodSetting(set); err != nil {
				return refused(err)
			}
		}
		managed = append(managed, set.Attr)
	}
	st, closeFn, err := o.g.Store()
	if err != nil {
		return err
	}
	defer closeFn()
	target, err := settingsTargetOf(st, o.Pod)
	if err != nil {
		return err
	}
	return applySettings(o.g, st, o.DryRun, target, func(rec ldapschema.SettingsRecord, next ldapschema.Attrs) {
		for _, name := range managed {
			delete(next, name)
		}
	}, managed)
}
