package directory

import (
	"errors"
	"strings"

	"github.com/go-ldap/ldap/v3"

	"github.com/cpactl/cpactl/directory/ldapclient"
	"github.com/cpactl/cpactl/ldapschema"
)

// SchemaInstall is what InstallSchema found on the server and added (or,
// with dryRun, would add).
type SchemaInstall struct {
	// Findings compares every element of cpactl's schema with the server's
	// cn=config, in ldapschema.Compare's order; the "missing" ones are the
	// ones added.
	Findings []ldapschema.Finding
	// Added counts the elements added (or that would be).
	Added int
	// Unchanged counts the elements already on the server as defined.
	Unchanged int
	// Upgraded lists the object classes whose server definition lacked
	// MAY attributes only ("outdated"), replaced by cpactl's (or that would
	// be).
	Upgraded []ldapschema.Finding
	// Different lists the elements the server defines otherwise: left
	// alone, as an OID never changes meaning. An outdated class held in
	// another schema entry than cpactl's is listed here too.
	Different []ldapschema.Finding
}

// SchemaReadError says the server's schema could not be read: its cn=config
// schema entries (InstallSchema) or its subschema (CheckSchema). It unwraps
// to the cause, so the exit code follows the LDAP result (insufficient
// access is exit 4).
type SchemaReadError struct {
	What string // "cn=schema,cn=config", or "the subschema cn=Subschema"
	Err  error
}

func (e *SchemaReadError) Error() string {
	return "cannot read " + e.What + ": " + ldapclient.Describe(e.Err)
}

func (e *SchemaReadError) Unwrap() error { return e.Err }

// SchemaWriteError says the server refused adding the schema to cn=config.
type SchemaWriteError struct {
	Err error
}

func (e *SchemaWriteError) Error() string {
	return "installing the schema: " + ldapclient.Describe(e.Err)
}

func (e *SchemaWriteError) Unwrap() error { return e.Err }

// InstallSchema adds cpactl's schema to the server's cn=config, comparing
// by OID: the missing elements are added (to cpactl's own schema entry when
// the server has one, else in a new ldapschema.ConfigDN entry), identical
// ones are left alone, outdated classes of cpactl's own entry (fewer MAY
// attributes, an older cpactl's) are replaced in place (Upgraded), and ones
// whose definition differs otherwise are reported in Different and left
// alone. With dryRun it writes nothing. The connection
// must be allowed to read and write cn=config (ldapi:// with SASL EXTERNAL
// as root, or the cn=config root DN); a read that fails or finds no schema
// entry is a *SchemaReadError, a refused write a *SchemaWriteError.
func InstallSchema(c ldapclient.Client, dryRun bool) (SchemaInstall, error) {
	res, err := c.Search(ldap.NewSearchRequest(ldapschema.SchemaConfigBase, ldap.ScopeSingleLevel, ldap.NeverDerefAliases, 0, 0,
		false, ldapclient.ClassFilter(ldapschema.ClassOlcSchemaConfig),
		[]string{ldapschema.AttrCN, ldapschema.AttrOlcAttributeTypes, ldapschema.AttrOlcObjectClasses}, nil))
	if err != nil || res == nil || len(res.Entries) == 0 {
		if err == nil {
			err = errors.New("no schema entries visible")
		}
		return SchemaInstall{}, &SchemaReadError{What: ldapschema.SchemaConfigBase, Err: err}
	}
	var defs []string
	ourDN := ""
	ourClasses := map[string]string{} // OID -> the stored value, "{N}" prefix included
	for _, e := range res.Entries {
		defs = append(defs, e.GetEqualFoldAttributeValues(ldapschema.AttrOlcAttributeTypes)...)
		defs = append(defs, e.GetEqualFoldAttributeValues(ldapschema.AttrOlcObjectClasses)...)
		if strings.EqualFold(cnConfigName(e.GetAttributeValue(ldapschema.AttrCN)), ldapschema.SchemaName) {
			ourDN = e.DN
			for _, v := range e.GetEqualFoldAttributeValues(ldapschema.AttrOlcObjectClasses) {
				if d, err := ldapschema.ParseDescription(v); err == nil {
					ourClasses[d.OID] = v
				}
			}
		}
	}
	out := SchemaInstall{Findings: ldapschema.Compare(defs)}
	var addAttrs, addClasses, oldClasses, newClasses []string
	for i, f := range out.Findings {
		switch f.Status {
		case "missing":
			// Compare lists the attribute types first, then the classes.
			if i < len(ldapschema.Attributes) {
				addAttrs = append(addAttrs, ldapschema.Attributes[i].Definition())
			} else {
				addClasses = append(addClasses, ldapschema.Classes[i-len(ldapschema.Attributes)].Definition())
			}
		case "outdated":
			// Replaced in place, keeping its "{N}" position, when it is in
			// cpactl's own entry; elsewhere it is not ours to rewrite.
			old, ok := ourClasses[f.OID]
			if !ok {
				out.Different = append(out.Different, f)
				continue
			}
			oldClasses = append(oldClasses, old)
			def := ldapschema.Classes[i-len(ldapschema.Attributes)].Definition()
			if n := strings.IndexByte(old, '}'); strings.HasPrefix(old, "{") && n > 0 {
				def = old[:n+1] + def
			}
			newClasses = append(newClasses, def)
			out.Upgraded = append(out.Upgraded, f)
		case "different":
			out.Different = append(out.Different, f)
		default:
			out.Unchanged++
		}
	}
	out.Added = len(addAttrs) + len(addClasses)
	if out.Added+len(out.Upgraded) == 0 || dryRun {
		return out, nil
	}
	if ourDN != "" {
		// One modify: the new attribute types first, so that the upgraded
		// classes may name them.
		req := ldap.NewModifyRequest(ourDN, nil)
		if len(addAttrs) > 0 {
			req.Add(ldapschema.AttrOlcAttributeTypes, addAttrs)
		}
		if len(oldClasses) > 0 {
			req.Delete(ldapschema.AttrOlcObjectClasses, oldClasses)
			req.Add(ldapschema.AttrOlcObjectClasses, newClasses)
		}
		if len(addClasses) > 0 {
			req.Add(ldapschema.AttrOlcObjectClasses, addClasses)
		}
		err = c.Modify(req)
	} else {
		req := ldap.NewAddRequest(ldapschema.ConfigDN, nil)
		req.Attribute(ldapschema.AttrObjectClass, []string{ldapschema.ClassOlcSchemaConfig})
		req.Attribute(ldapschema.AttrCN, []string{ldapschema.SchemaName})
		if len(addAttrs) > 0 {
			req.Attribute(ldapschema.AttrOlcAttributeTypes, addAttrs)
		}
		if len(addClasses) > 0 {
			req.Attribute(ldapschema.AttrOlcObjectClasses, addClasses)
		}
		err = c.Add(req)
	}
	if err != nil {
		return out, &SchemaWriteError{Err: err}
	}
	return out, nil
}

// cnConfigName strips OpenLDAP's "{N}" ordering prefix from a cn=config RDN
// value.
func cnConfigName(cn string) string {
	if strings.HasPrefix(cn, "{") {
		if i := strings.IndexByte(cn, '}'); i > 0 {
			return cn[i+1:]
		}
	}
	return cn
}

// CheckSchema compares cpactl's schema with the server's subschema (the
// entry the root DSE's subschemaSubentry names, else cn=Subschema), which
// any bind that may read it can do, by OID (ldapschema.Compare). A
// subschema it cannot read is a *SchemaReadError.
func CheckSchema(c ldapclient.Client) ([]ldapschema.Finding, error) {
	subschema := ldapschema.DefaultSubschemaDN
	if res, err := c.Search(ldap.NewSearchRequest("", ldap.ScopeBaseObject, ldap.NeverDerefAliases, 0, 0, false,
		"(objectClass=*)", []string{ldapschema.AttrSubschemaSubentry}, nil)); err == nil && len(res.Entries) > 0 {
		if v := res.Entries[0].GetEqualFoldAttributeValue(ldapschema.AttrSubschemaSubentry); v != "" {
			subschema = v
		}
	}
	res, err := c.Search(ldap.NewSearchRequest(subschema, ldap.ScopeBaseObject, ldap.NeverDerefAliases, 0, 0, false,
		ldapclient.ClassFilter(ldapschema.ClassSubschema), []string{ldapschema.AttrAttributeTypes, ldapschema.AttrObjectClasses}, nil))
	if err != nil || len(res.Entries) == 0 {
		if err == nil {
			err = errors.New("empty answer")
		}
		return nil, &SchemaReadError{What: "the subschema " + subschema, Err: err}
	}
	e := res.Entries[0]
	defs := append(e.GetEqualFoldAttributeValues(ldapschema.AttrAttributeTypes), e.GetEqualFoldAttributeValues(ldapschema.AttrObjectClasses)...)
	return ldapschema.Compare(defs), nil
}
