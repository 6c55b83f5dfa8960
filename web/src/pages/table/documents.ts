// The GraphQL selection sets the table page asks for: a record and a field.
export const REC = 'id createdAt updatedAt createdBy updatedBy fields';
/** A field; `computing` is the progress of a computed field being filled in the background. */
export const FIELD = 'id tableId name type options config required indexed computing';
/** The fields of a table, in column order. */
export const FIELDS_QUERY = `query TableFields($t: ID!) { fields(tableId: $t, pageSize: 1000) { items { ${FIELD} } } }`;
