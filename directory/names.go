package directory

import (
	"errors"
	"slices"
	"strings"

	"github.com/go-ldap/ldap/v3"

	"github.com/cpactl/cpactl/broker"
	"github.com/cpactl/cpactl/directory/ldapclient"
	"github.com/cpactl/cpactl/internal/fold"
	"github.com/cpactl/cpactl/internal/nearest"
	"github.com/cpactl/cpactl/internal/objkind"
	"github.com/cpactl/cpactl/ldapschema"
)

// nameSearch is where the objects of one kind live and which attribute
// names them.
type nameSearch struct {
	base   func(ldapschema.DIT) string
	scope  int
	filter string
	attr   string
}

// nameSearches covers every kind Names completes.
var nameSearches = map[string]nameSearch{
	objkind.Site:             {ldapschema.DIT.Sites, ldap.ScopeSingleLevel, ldapclient.ClassFilter(ldapschema.ClassSite), ldapschema.AttrCN},
	objkind.Pod:              {ldapschema.DIT.Pods, ldap.ScopeSingleLevel, ldapclient.ClassFilter(ldapschema.ClassPod), ldapschema.AttrCN},
	objkind.ConnectionServer: {ldapschema.DIT.Pods, ldap.ScopeWholeSubtree, ldapclient.ClassFilter(ldapschema.ClassConnectionServer), ldapschema.AttrCN},
	objkind.Pool:             {ldapschema.DIT.Pods, ldap.ScopeWholeSubtree, poolFilter(), ldapschema.AttrCN},
	objkind.Farm:             {ldapschema.DIT.Pods, ldap.ScopeWholeSubtree, ldapclient.ClassFilter(ldapschema.ClassRDSFarm), ldapschema.AttrCN},
	objkind.Host:             {ldapschema.DIT.Pods, ldap.ScopeWholeSubtree, ldapclient.ClassFilter(ldapschema.ClassRDSHost), ldapschema.AttrCN},
	objkind.Entitlement:      {ldapschema.DIT.Entitlements, ldap.ScopeSingleLevel, ldapclient.ClassFilter(ldapschema.ClassGlobalEntitlement), ldapschema.AttrCN},
	objkind.User:             {ldapschema.DIT.People, ldap.ScopeSingleLevel, ldapclient.ClassFilter(ldapschema.ClassInetOrgPerson), ldapschema.AttrUID},
	objkind.Group:            {ldapschema.DIT.Groups, ldap.ScopeSingleLevel, ldapclient.ClassFilter(ldapschema.ClassGroup), ldapschema.AttrCN},
	objkind.Computer:         {ldapschema.DIT.Computers, ldap.ScopeSingleLevel, ldapclient.ClassFilter(ldapschema.ClassDevice), ldapschema.AttrCN},
	objkind.Session:          {ldapschema.DIT.Sessions, ldap.ScopeSingleLevel, ldapclient.ClassFilter(ldapschema.ClassSession), ldapschema.AttrCN},
}

// Names returns the names of at most limit objects of one kind (objkind.Site,
// objkind.Pool, ...) that start with prefix (compared as the directory compares
// names: without regard to case), sorted. It is made for shell completion:
// one search that is not paged, carries a size limit and asks for the name
// attribute only; a search the limit cut short returns what came, without
// an error. An unknown kind returns nothing.
func (s *Store) Names(kind, prefix string, limit int) ([]string, error) {
	ns, ok := nameSearches[kind]
	if !ok {
		return nil, nil
	}
	filter := ns.filter
	if prefix != "" {
		filter = ldapclient.And(filter, ldapclient.Prefix(ns.attr, prefix))
	}
	res, err := s.Client.Search(ldap.NewSearchRequest(ns.base(s.DIT), ns.scope, ldap.NeverDerefAliases, limit, 0, false,
		filter, []string{ns.attr}, nil))
	if err != nil && !ldapclient.IsCode(err, ldap.LDAPResultSizeLimitExceeded) {
		return nil, err
	}
	if res == nil {
		return nil, err
	}
	names := make([]string, 0, len(res.Entries))
	for _, e := range res.Entries {
		if v := e.GetEqualFoldAttributeValue(ns.attr); v != "" {
			names = append(names, v)
		}
	}
	slices.SortFunc(names, func(a, b string) int { return strings.Compare(fold.Key(a), fold.Key(b)) })
	return names, nil
}

// MemberNames completes a group member argument (Store.ResolveMember's
// forms): after "user:", "group:" or "computer:" the names of that kind,
// prefix kept; otherwise the users, groups and computers whose names start
// with prefix, each bare (at most limit of each kind).
func (s *Store) MemberNames(prefix string, limit int) ([]string, error) {
	for _, p := range memberPrefixes {
		if len(prefix) >= len(p.prefix) && strings.EqualFold(prefix[:len(p.prefix)], p.prefix) {
			names, err := s.Names(p.kind, prefix[len(p.prefix):], limit)
			for i, n := range names {
				names[i] = prefix[:len(p.prefix)] + n
			}
			return names, err
		}
	}
	var all []string
	for _, p := range memberPrefixes {
		names, err := s.Names(p.kind, prefix, limit)
		if err != nil {
			return all, err
		}
		all = append(all, names...)
	}
	return all, nil
}

// Suggest returns the name of an object of kind nearest to name (a
// mistyped name: "India" for "Indai"), or "" when none is near enough or
// the names cannot be read. It streams the names of that kind (one paged
// search asking for the name attribute only, not counted as progress):
// it runs on the way to a not-found error, never on a command's success.
// The kind "user, group or computer" (ResolveMember's) looks at the three.
func (s *Store) Suggest(kind, name string) string {
	if name == "" {
		return ""
	}
	kinds := []string{kind}
	if kind == kindMember {
		kinds = []string{objkind.User, objkind.Group, objkind.Computer}
	}
	f := nearest.New(name)
	for _, k := range kinds {
		ns, ok := nameSearches[k]
		if !ok {
			return ""
		}
		err := s.Client.SearchEach(ldap.NewSearchRequest(ns.base(s.DIT), ns.scope, ldap.NeverDerefAliases, 0, 0, false,
			ns.filter, []string{ns.attr}, nil), func(e *ldap.Entry) error {
			f.Add(e.GetEqualFoldAttributeValue(ns.attr))
			return nil
		})
		if err != nil {
			return ""
		}
	}
	best, _ := f.Best()
	return best
}

// notFound is the *NotFoundError of a name of kind the directory does not
// hold, with the nearest name it does hold as its suggestion.
func (s *Store) notFound(kind, name string) *ldapclient.NotFoundError {
	return &ldapclient.NotFoundError{Kind: kind, Name: name, Suggestion: s.Suggest(kind, name)}
}

// WithSuggestion adds to a not-found error of the broker (a resolve,
// loads or impact request naming a user, entitlement, Connection Server,
// pod, computer or site that does not exist) the nearest name the
// directory holds; any other error is returned as it is.
func (s *Store) WithSuggestion(err error) error {
	var nf *broker.NotFoundError
	if errors.As(err, &nf) && nf.Suggestion == "" {
		nf.Suggestion = s.Suggest(nf.Kind, nf.Name)
	}
	return err
}
