package directory

import "github.com/go-ldap/ldap/v3"

// EachEntry streams every entry under the base (the base entry and its
// whole subtree, every attribute, and its entryCSN) to each, as the paged
// search delivers them, without holding them: what `cpactl diff` and
// `apply` compare with the desired state (apply's deletes assert the
// entryCSN read). A base that does not exist is a *LayoutError, as for
// Each.
func (s *Store) EachEntry(each func(*ldap.Entry)) error {
	if err := s.notEnclosed(); err != nil {
		return err
	}
	return s.Each(s.DIT.Base, ldap.ScopeWholeSubtree, "(objectClass=*)", objectAttrs, func(e *ldap.Entry) error {
		each(e)
		return nil
	})
}
