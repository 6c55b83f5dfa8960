// The whole REST route table, in one list: the adapter, the OpenAPI generator and the tests all read it.
import type { Route } from '../route.js';
import { authRoutes } from './auth.routes.js';
import { baseRoutes } from './bases.routes.js';
import { recordRoutes } from './records.routes.js';
import { tableRoutes } from './tables.routes.js';
import { userRoutes } from './users.routes.js';

export const routes: Route[] = [...authRoutes, ...userRoutes, ...baseRoutes, ...tableRoutes, ...recordRoutes];
