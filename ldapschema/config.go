package ldapschema

// Names of OpenLDAP's cn=config schema entries, where `schema install`
// adds cpactl's schema, and of the RFC 4512 subschema, which `schema check`
// reads.
const (
	// SchemaConfigBase is the cn=config entry whose children hold the
	// schemas loaded into slapd (cn={N}core, cn={N}cpactl, ...).
	SchemaConfigBase = "cn=schema,cn=config"
	// ClassOlcSchemaConfig is the object class of those children.
	ClassOlcSchemaConfig = "olcSchemaConfig"
	// AttrOlcAttributeTypes holds a cn=config schema's attribute types.
	AttrOlcAttributeTypes = "olcAttributeTypes"
	// AttrOlcObjectClasses holds a cn=config schema's object classes.
	AttrOlcObjectClasses = "olcObjectClasses"

	// AttrSubschemaSubentry is the root DSE attribute that names the
	// subschema entry (RFC 4512 §4.2).
	AttrSubschemaSubentry = "subschemaSubentry"
	// DefaultSubschemaDN is slapd's subschema entry, read when the root DSE
	// does not name one.
	DefaultSubschemaDN = "cn=Subschema"
	// ClassSubschema is the object class of the subschema entry.
	ClassSubschema = "subschema"
	// AttrAttributeTypes holds the subschema's attribute types.
	AttrAttributeTypes = "attributeTypes"
	// AttrObjectClasses holds the subschema's object classes.
	AttrObjectClasses = "objectClasses"
)
