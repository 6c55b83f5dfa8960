// Users: system administration of accounts, the first administrator, and each user's default base.
import { hash } from '@node-rs/argon2';
import { and, asc, count, eq, ne, sql } from 'drizzle-orm';
import { readCache } from '../db/read-cache.js';
import { first, type Schema, type UnitOfWork } from '../db/store.js';
import { AppError, badRequest, conflict, notFound } from '../errors.js';
import { newId, nowIso } from '../ids.js';
import type { BaseService } from './bases.js';
import type { Deps } from './deps.js';
import { pageArgs, type Page } from './pagination.js';
import { randomBytes } from 'node:crypto';
import { checkName } from '../checks.js';

export interface User {
  id: string;
  email: string;
  name: string;
  isAdmin: boolean;
  defaultBaseId: string | null;
  createdAt: string;
  updatedAt: string;
}

const EMAIL = /^[^\s@]+@[^\s@]+$/;

export const hashPassword = (password: string) => hash(password, { algorithm: 2 /* argon2id */ });

function checkEmail(email: unknown): string {
  if (typeof email !== 'string' || !EMAIL.test(email.trim()) || email.length > 254) throw badRequest('email must be an email address', [{ field: 'email', message: 'must be an email address' }]);
  return email.trim().toLowerCase();
}
function checkPassword(password: unknown): string {
  if (typeof password !== 'string' || password.length < 8 || password.length > 256) throw badRequest('password must be 8 to 256 characters', [{ field: 'password', message: 'must be 8 to 256 characters' }]);
  return password;
}

export function createUserService({ store }: Deps, baseService: Pick<BaseService, 'releaseUser'>) {
  const { baseMembers, bases, users } = store.schema;
  const toUser = (row: Schema['users']['$inferSelect']): User => ({
    id: row.id, email: row.email, name: row.name, isAdmin: row.isAdmin, defaultBaseId: row.defaultBaseId,
    createdAt: row.createdAt, updatedAt: row.updatedAt,
  });

  // Prepared once on the store (reads outside transactions) and cached: every authenticated request looks its user up.
  const byId = store.db.select().from(users).where(eq(users.id, sql.placeholder('id'))).prepare();
  const findById = readCache(store, async (id) => (await byId.execute({ id }))[0]);
  /** `findById` as a step of a unit of work: inside a transaction it sees the transaction's own writes. */
  function rowById(uow: UnitOfWork, id: string) {
    return uow.inTransaction ? first(uow.db.select().from(users).where(eq(users.id, id)).limit(1)) : findById(id);
  }
  async function emailTaken(tx: UnitOfWork, email: string) {
    return !!(await first(tx.db.select({ id: users.id }).from(users).where(eq(users.email, email)).limit(1)));
  }

  async function adminCountExcept(tx: UnitOfWork, id: string) {
    return (await first(tx.db.select({ n: count() }).from(users).where(and(eq(users.isAdmin, true), ne(users.id, id)))))!.n;
  }

  return {
    /** The user row, or undefined; reads outside transactions. */
    findById,
    async findByEmail(email: string) {
      return first(store.db.select().from(users).where(eq(users.email, email.trim().toLowerCase())).limit(1));
    },

    async createUser(input: { email: unknown; name: unknown; password: unknown; isAdmin?: unknown }): Promise<User> {
      const email = checkEmail(input.email);
      const name = checkName(input.name, 100);
      const password = checkPassword(input.password);
      if (input.isAdmin !== undefined && input.isAdmin !== null && typeof input.isAdmin !== 'boolean') throw badRequest('is_admin must be a boolean', [{ field: 'is_admin', message: 'must be a boolean' }]);
      // Hashed before the transaction begins: it takes a while, and the transaction holds the write lock.
      const passwordHash = await hashPassword(password);
      return store.transaction(async (tx) => {
        if (await emailTaken(tx, email)) throw conflict(`A user with email ${email} already exists`);
        const now = nowIso();
        const id = newId('usr');
        const baseId = newId('bse');
        await tx.db.insert(users).values({ id, email, name, passwordHash, isAdmin: input.isAdmin === true, defaultBaseId: baseId, createdAt: now, updatedAt: now });
        await tx.db.insert(bases).values({ id: baseId, name: 'My base', description: '', createdAt: now, updatedAt: now });
        await tx.db.insert(baseMembers).values({ baseId, userId: id, role: 'owner', createdAt: now });
        return toUser((await rowById(tx, id))!);
      });
    },

    async listUsers(page?: number | null, pageSize?: number | null): Promise<Page<User>> {
      const p = pageArgs(page, pageSize, { defaultSize: 20, maxSize: 1000 });
      const rows = await store.db.select().from(users).orderBy(asc(users.createdAt), asc(users.id)).limit(p.pageSize).offset(p.offset);
      const total = (await first(store.db.select({ n: count() }).from(users)))!.n;
      return { items: rows.map(toUser), total, page: p.page, pageSize: p.pageSize };
    },

    async getUser(id: string): Promise<User> {
      const row = await findById(id);
      if (!row) throw notFound(`User ${id} not found`);
      return toUser(row);
    },

    async updateUser(id: string, input: { email?: unknown; name?: unknown; password?: unknown; isAdmin?: unknown }): Promise<User> {
      const changes: Partial<Schema['users']['$inferInsert']> = {};
      if (input.email !== undefined) changes.email = checkEmail(input.email);
      if (input.name !== undefined) changes.name = checkName(input.name, 100);
      // Hashed before the transaction begins, as in createUser.
      if (input.password !== undefined) changes.passwordHash = await hashPassword(checkPassword(input.password));
      if (input.isAdmin !== undefined) {
        if (typeof input.isAdmin !== 'boolean') throw badRequest('is_admin must be a boolean', [{ field: 'is_admin', message: 'must be a boolean' }]);
        changes.isAdmin = input.isAdmin;
      }
      return store.transaction(async (tx) => {
        const row = await rowById(tx, id);
        if (!row) throw notFound(`User ${id} not found`);
        if (changes.email && changes.email !== row.email && (await emailTaken(tx, changes.email))) {
          throw conflict(`A user with email ${changes.email} already exists`);
        }
        if (changes.isAdmin === false && row.isAdmin && (await adminCountExcept(tx, id)) === 0) throw conflict('The last system administrator cannot lose that role');
        await tx.db.update(users).set({ ...changes, updatedAt: nowIso() }).where(eq(users.id, id));
        return toUser((await rowById(tx, id))!);
      });
    },

    async deleteUser(id: string): Promise<{ id: string; deleted: true }> {
      return store.transaction(async (tx) => {
        const row = await rowById(tx, id);
        if (!row) throw notFound(`User ${id} not found`);
        if (row.isAdmin && (await adminCountExcept(tx, id)) === 0) throw conflict('The last system administrator cannot be deleted');
        await baseService.releaseUser(tx, id);
        // Memberships go with the user (foreign key cascade).
        await tx.db.delete(users).where(eq(users.id, id));
        return { id, deleted: true as const };
      });
    },

    /** Contract section 0: with no users, create the system administrator (random password printed once). */
    async ensureFirstAdmin(email?: string, password?: string): Promise<{ email: string; password?: string } | null> {
      if ((await first(store.db.select({ n: count() }).from(users)))!.n > 0) return null;
      const generated = password ? undefined : randomBytes(12).toString('base64url');
      try {
        const admin = await this.createUser({ email: email ?? 'admin@localhost', name: 'Administrator', password: password ?? generated, isAdmin: true });
        return { email: admin.email, password: generated };
      } catch (e) {
        // Processes starting at once over one database: another one created the administrator first.
        if (e instanceof AppError && e.code === 'CONFLICT') return null;
        throw e;
      }
    },
  };
}

export type UserService = ReturnType<typeof createUserService>;
