// Shell completion (`cpactl completion bash|zsh|fish|powershell`, cobra's):
// besides commands and flags, the names of objects, the values of
// enumeration flags and settings keys. Everything is wired by
// registerCompletions, from the tables below, so a new flag named like one
// of them completes without code of its own (docs/config.md).

package commands

import (
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/cpactl/cpactl/directory"
	"github.com/cpactl/cpactl/generate"
	"github.com/cpactl/cpactl/internal/objkind"
	"github.com/cpactl/cpactl/ldapschema"
	"github.com/cpactl/cpactl/output"
	"github.com/cpactl/cpactl/progress"
	"github.com/cpactl/cpactl/quote"
)

// completionTimeout bounds the lookup of names for one completion,
// connecting and binding included: a shell must not hang on a server that
// does not answer.
const completionTimeout = 2 * time.Second

// completionLimit is the size limit of that search: enough to choose from,
// never the whole directory.
const completionLimit = 500

// nameFlags are the flags that take the name of an object, and its kind.
var nameFlags = map[string]string{
	"site":              objkind.Site,
	"pod":               objkind.Pod,
	"brokering-pod":     objkind.Pod,
	"offline-pod":       objkind.Pod,
	"connection-server": objkind.ConnectionServer,
	"pool":              objkind.Pool,
	"farm":              objkind.Farm,
	"host":              objkind.Host,
	"entitlement":       objkind.Entitlement,
	"backup":            objkind.Entitlement,
	"user":              objkind.User,
	"group":             objkind.Group,
	"client":            objkind.Computer,
	"set":               objkind.Site, // site preferred --set A,B,C
}

// memberFlags take group members (users, groups and computers).
var memberFlags = []string{"members"}

// fileFlags take a file name: the shell completes files.
var fileFlags = []string{"from", "password-file", "ca-file", "output-file", "output-dir", "with", "base-from", "ldap-password-file", "ldap-ca-file"}

// lower spells stored values as the flags are usually written.
func lower(values []string) []string {
	out := make([]string, len(values))
	for i, v := range values {
		out[i] = strings.ToLower(v)
	}
	return out
}

// enumFlags are the values each enumeration flag takes: the tables its
// validator checks (options.go and the command's file), never a copy.
func enumFlags() map[string][]string {
	formats := make([]string, len(output.Formats))
	for i, f := range output.Formats {
		formats[i] = string(f)
	}
	kinds := make([]string, len(poolKinds))
	for i, k := range poolKinds {
		kinds[i] = kindWord(k)
	}
	schema := make([]string, 0, len(schemaFormats))
	for f := range schemaFormats {
		schema = append(schema, f)
	}
	slices.Sort(schema)
	modes := make([]string, len(progress.Modes))
	for i, m := range progress.Modes {
		modes[i] = string(m)
	}
	return map[string][]string{
		"progress":          modes,
		"scope":             scopes, // written in capitals in help and docs
		"load-distribution": lower(loadDistributions),
		"default-protocol":  lower(protocols),
		"protocol":          lower(protocols),
		"type":              lower(entitlementTypes),
		"state":             lower(sessionStates),
		"status":            lower(podStatuses),
		"kind":              kinds,
		"features":          lower(ldapschema.AllFeatures),
		"output":            formats,
		"format":            schema,
		"preset":            generate.Presets(),
	}
}

// nounKinds are the kind of object each noun's verbs name first.
var nounKinds = map[string]string{
	"site":        objkind.Site,
	"pod":         objkind.Pod,
	"cs":          objkind.ConnectionServer,
	"pool":        objkind.Pool,
	"farm":        objkind.Farm,
	"host":        objkind.Host,
	"entitlement": objkind.Entitlement,
	"user":        objkind.User,
	"group":       objkind.Group,
	"computer":    objkind.Computer,
	"session":     objkind.Session,
}

// objectVerbs take an existing object of their noun as first argument;
// the noun's other verbs (list, create, ...) complete no argument.
var objectVerbs = []string{"show", "update", "delete", "preferred", "set-load", "members", "add-member",
	"remove-member", "add-pool", "remove-pool", "entitlements", "end"}

// restKinds say what the arguments after the first name, by command.
var restKinds = map[string]string{
	"entitlement add-pool":    objkind.Pool,
	"entitlement remove-pool": objkind.Pool,
	"session end":             objkind.Session,
	"group add-member":        memberKind,
	"group remove-member":     memberKind,
}

// memberKind stands for "a user, group or computer" in restKinds.
const memberKind = "member"

// registerCompletions wires completion into the whole tree: every flag
// named in the tables above and the arguments of every noun's verbs, of
// apply, diff, settings set/reset and config. A flag or command that
// already has its own completion keeps it.
func registerCompletions(root *cobra.Command, g *Globals) {
	enums := enumFlags()
	register := func(cmd *cobra.Command, f *pflag.Flag) {
		if _, ok := cmd.GetFlagCompletionFunc(f.Name); ok {
			return
		}
		var fn cobra.CompletionFunc
		switch {
		case nameFlags[f.Name] != "":
			fn = g.completeNames(nameFlags[f.Name], isList(f))
		case slices.Contains(memberFlags, f.Name):
			fn = g.completeNames(memberKind, isList(f))
		case enums[f.Name] != nil:
			fn = completeWords(enums[f.Name], isList(f))
		case slices.Contains(fileFlags, f.Name):
			fn = completeFiles
		case f.Name == "context":
			fn = g.completeContexts
		case f.Name == "setting":
			fn = completeSettings(true)
		case assignFlags[f.Name] != "":
			fn = g.completeAssign(assignFlags[f.Name])
		default:
			return
		}
		_ = cmd.RegisterFlagCompletionFunc(f.Name, fn) // cannot fail: the flag is cmd's
	}
	root.PersistentFlags().VisitAll(func(f *pflag.Flag) { register(root, f) })
	args := map[string]cobra.CompletionFunc{
		"apply":          completeFirstFile,
		"diff":           completeFirstFile,
		"horizon import": completeFirstFile,
		"settings set":   completeSettings(true),
		"settings reset": completeSettings(false),
		"config use-context": func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
			if len(args) > 0 {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			return g.completeContexts(cmd, args, toComplete)
		},
	}
	args["config set-context"] = args["config use-context"]
	var walk func(cmd *cobra.Command)
	walk = func(cmd *cobra.Command) {
		cmd.LocalNonPersistentFlags().VisitAll(func(f *pflag.Flag) { register(cmd, f) })
		cmd.PersistentFlags().VisitAll(func(f *pflag.Flag) { register(cmd, f) })
		if cmd.ValidArgsFunction == nil {
			path := strings.TrimPrefix(strings.TrimPrefix(cmd.CommandPath(), root.Name()), " ")
			noun, verb, _ := strings.Cut(path, " ")
			switch {
			case args[path] != nil:
				cmd.ValidArgsFunction = args[path]
			case nounKinds[noun] != "" && slices.Contains(objectVerbs, verb):
				cmd.ValidArgsFunction = g.completeArgs(nounKinds[noun], restKinds[path])
			case nounKinds[noun] != "" && verb != "":
				cmd.ValidArgsFunction = cobra.NoFileCompletions
			}
		}
		for _, c := range cmd.Commands() {
			walk(c)
		}
	}
	walk(root)
}

// isList reports whether a flag takes a comma-separated list (a,b,c):
// completion then completes the last item.
func isList(f *pflag.Flag) bool {
	_, csv := f.Value.(*csvList)
	return csv || f.Value.Type() == "stringSlice"
}

// completeWords offers fixed values (an enumeration).
func completeWords(words []string, list bool) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		done, last := splitList(toComplete, list)
		var out []cobra.Completion
		for _, w := range words {
			if strings.HasPrefix(strings.ToLower(w), strings.ToLower(last)) {
				out = append(out, done+w)
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

// splitList cuts "a,b,c" into "a,b," (kept in front of every completion)
// and "c" (the item being completed) when list is set.
func splitList(toComplete string, list bool) (done, last string) {
	if !list {
		return "", toComplete
	}
	i := strings.LastIndex(toComplete, ",")
	return toComplete[:i+1], toComplete[i+1:]
}

func completeFiles(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
	return nil, cobra.ShellCompDirectiveDefault
}

// completeFirstFile completes apply's and diff's one FILE.ldif argument.
func completeFirstFile(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return nil, cobra.ShellCompDirectiveDefault
}

// completeSettings completes settings keys, Horizon's names and their
// aliases (ldapschema.Settings, the table `settings set` checks); with
// --pod only the per-pod ones. set completes KEY= and leaves the cursor
// after the "=".
func completeSettings(set bool) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if strings.Contains(toComplete, "=") {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		// --pod of settings set/reset names the pod the keys are for;
		// resolve's --pod (with --setting) is where the user connects.
		perPod := cmd.Parent() != nil && cmd.Parent().Name() == "settings" && cmd.Flags().Changed("pod")
		suffix, directive := "", cobra.ShellCompDirectiveNoFileComp
		if set {
			suffix, directive = "=", directive|cobra.ShellCompDirectiveNoSpace
		}
		var out []cobra.Completion
		for _, s := range ldapschema.Settings {
			if perPod && !s.PerPod {
				continue
			}
			for _, key := range []string{s.Attr, s.Alias} {
				if strings.HasPrefix(strings.ToLower(key), strings.ToLower(toComplete)) {
					out = append(out, cobra.CompletionWithDesc(key+suffix, s.Range()+", default "+strconv.Itoa(s.Default)))
				}
			}
		}
		return out, directive
	}
}

// completeArgs completes a verb's arguments: an object of kind first, then
// objects of rest ("" when the verb takes one argument).
func (g *Globals) completeArgs(kind, rest string) cobra.CompletionFunc {
	first, more := g.completeNames(kind, false), g.completeNames(rest, false)
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		switch {
		case len(args) == 0:
			return first(cmd, args, toComplete)
		case rest != "":
			return more(cmd, args, toComplete)
		}
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
}

// completeNames completes the names of objects of kind (or group members,
// memberKind), from --from FILE when the command line gives it, else from
// the server the connection settings name. Silent: on any failure it
// offers nothing, and never files.
func (g *Globals) completeNames(kind string, list bool) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		done, last := splitList(toComplete, list)
		if kind == objkind.User {
			// DOMAIN\uid: complete the uid, keep the domain.
			i := strings.LastIndex(last, `\`)
			done, last = done+last[:i+1], last[i+1:]
		}
		names := g.lookupNames(cmd, func(st *directory.Store) ([]string, error) {
			if kind == memberKind {
				return st.MemberNames(last, completionLimit)
			}
			return st.Names(kind, last, completionLimit)
		})
		out := make([]cobra.Completion, 0, len(names))
		for _, n := range names {
			// A name holding a control character is not offered: the
			// shell would show it raw (a line break would even split it
			// in two candidates), and nobody types it.
			if quote.Visible(n) == n {
				out = append(out, done+n)
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

// assignFlags are the what-if flags of the form NAME=VALUE, by the kind
// of object NAME is.
var assignFlags = map[string]string{"pool-sessions": objkind.Pool, "host-load": objkind.Host,
	"preferred": objkind.Site}

// completeAssign completes NAME= of a NAME=VALUE flag, leaving the cursor
// after the "="; nothing once the "=" is typed.
func (g *Globals) completeAssign(kind string) cobra.CompletionFunc {
	names := g.completeNames(kind, false)
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if strings.Contains(toComplete, "=") {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		out, directive := names(cmd, args, toComplete)
		for i := range out {
			out[i] += "="
		}
		return out, directive | cobra.ShellCompDirectiveNoSpace
	}
}

// lookupNames runs read on a store opened as the command line says, with
// the timeout cut to completionTimeout, nothing written to stderr and no
// prompt; whatever goes wrong, or takes longer than completionTimeout in
// all, gives nil.
func (g *Globals) lookupNames(cmd *cobra.Command, read func(*directory.Store) ([]string, error)) []string {
	q := *g // a copy: completion changes nothing of the command's globals
	q.IO.Err = io.Discard
	q.Strict = true // no connection on a config file others could change: no one sees a warning here
	if q.resolveSettings(cmd) != nil || q.PromptPassword {
		return nil
	}
	if q.Timeout <= 0 || q.Timeout > completionTimeout {
		q.Timeout = completionTimeout
	}
	from := ""
	if f := cmd.Flags().Lookup("from"); f != nil {
		from = f.Value.String()
	}
	found := make(chan []string, 1)
	go func() {
		st, closeFn, err := q.ReadStore(from)
		if err != nil {
			found <- nil
			return
		}
		defer closeFn()
		names, _ := read(st) // a search cut short still gives what came
		found <- names
	}()
	select {
	case names := <-found:
		return names
	case <-time.After(completionTimeout):
		return nil
	}
}

// completeContexts completes the names of the configuration file's
// contexts.
func (g *Globals) completeContexts(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	q := *g
	q.IO.Err = io.Discard // no warning in a shell's completion
	f, _, err := q.loadConfig()
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var out []cobra.Completion
	for _, c := range f.Contexts {
		if strings.HasPrefix(c.Name, toComplete) {
			out = append(out, c.Name)
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}
