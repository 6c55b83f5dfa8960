// Builds every domain service from the shared dependencies; the GraphQL context carries the result.
import { createAccess } from './access.js';
import { createAuthService } from './auth.js';
import { createBaseService } from './bases.js';
import type { Deps } from './deps.js';
import { createFieldService } from './fields.js';
import { createRecordService } from './records.js';
import { createTableService } from './tables.js';
import { createUserService } from './users.js';

export function createServices(deps: Deps) {
  const access = createAccess(deps);
  const users = createUserService(deps);
  const auth = createAuthService(deps, users);
  const bases = createBaseService(deps, access);
  const fields = createFieldService(deps);
  const tables = createTableService(deps, access, bases, fields);
  const records = createRecordService(deps, tables, fields);
  return { deps, access, users, auth, bases, fields, tables, records };
}

export type Services = ReturnType<typeof createServices>;
