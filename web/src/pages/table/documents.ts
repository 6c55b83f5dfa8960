// The GraphQL selection sets the table page asks for: a record and a field.
export const REC = 'id createdAt updatedAt createdBy updatedBy fields';
export const FIELD = 'id tableId name type options config required indexed';
