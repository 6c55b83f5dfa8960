// A plugin's data calls (contract section 7): the host API's methods and what each does, run as the caller through a gateway.
import { eq } from 'drizzle-orm';
import { first } from '../../db/store.js';
import { AppError, notFound } from '../../errors.js';
import { isObject } from '../../checks.js';
import type { Deps } from '../deps.js';
import { invalidParams } from './shared.js';
import type { StorageMethod } from './storage.js';

/** Every data method of the host API (spec 3, 4.2); the schema's scopes hold the permission and role each needs. */
export const DATA_METHODS = [
  'ui.getContext', 'selection.get', 'config.get', 'storage.get', 'storage.set', 'storage.remove', 'table.getSchema',
  'table.listTables', 'table.getRecords', 'table.getRecord', 'record.create', 'record.update', 'record.delete',
] as const;
export type DataMethod = (typeof DATA_METHODS)[number];
export const isDataMethod = (m: string): m is DataMethod => (DATA_METHODS as readonly string[]).includes(m);

/** What a plugin's data calls do, as the calling user; the schema layer runs them as GraphQL operations. */
export interface PluginDataGateway {
  listTables(baseId: string): Promise<unknown[]>;
  getSchema(tableId: string): Promise<unknown>;
  getRecords(tableId: string, q: { page?: number; perPage?: number; search?: string }): Promise<unknown>;
  getRecord(tableId: string, recordId: string): Promise<unknown>;
  createRecord(tableId: string, values: unknown): Promise<unknown>;
  updateRecord(tableId: string, recordId: string, values: unknown): Promise<unknown>;
  deleteRecord(tableId: string, recordId: string): Promise<unknown>;
}

/**
 * Decides whether the caller may make one data call, throwing (or rejecting) when not: built by the schema (the same
 * check as the pluginMethod scope) for the calls a script makes while it runs, which no resolver sees one by one.
 */
export type DataCallGuard = (method: string) => Promise<void> | void;

export interface DataCallParts {
  effectiveConfig: (id: string, baseId: string) => Promise<unknown>;
  storageCall: (id: string, baseId: string, method: StorageMethod, params: Record<string, unknown>) => Promise<unknown>;
  /** The context of an open sandbox (its selection snapshot) when the handshake token is this plugin's, in this base. */
  openContext: (handshakeToken: string | null | undefined, id: string, baseId: string) => Record<string, unknown> | undefined;
}

export interface RpcRequest {
  baseId: string;
  tableId?: string | null;
  method: string;
  params?: unknown;
  handshakeToken?: string | null;
}

// Whether the caller may make a call is decided before, by the schema's plugin scopes (or a script's guard).
export function createDataCalls(deps: Deps, parts: DataCallParts) {
  const { store } = deps;
  const { tables } = store.schema;

  /** A table id named by a data call must belong to the call's base (read outside transactions). */
  async function tableInBase(baseId: string, tableId: unknown): Promise<string> {
    if (typeof tableId !== 'string' || !tableId) throw invalidParams('tableId is required');
    const t = await first(store.db.select({ baseId: tables.baseId }).from(tables).where(eq(tables.id, tableId)).limit(1));
    if (t?.baseId !== baseId) throw notFound(`Table ${tableId} not found in base ${baseId}`);
    return tableId;
  }

  /** The table of the base that holds a record (record calls may name only the record). */
  async function tableOfRecord(baseId: string, recordId: string): Promise<string | null> {
    for (const t of await store.db.select({ id: tables.id }).from(tables).where(eq(tables.baseId, baseId))) {
      if ((await store.records.existing(t.id, [recordId])).has(recordId)) return t.id;
    }
    return null;
  }

  /** One data call, shared by ui RPC and script runs; the caller's checks have passed. */
  async function dataCall(
    gateway: PluginDataGateway, id: string, baseId: string, method: string, params: Record<string, unknown>, openContext?: Record<string, unknown>,
  ): Promise<unknown> {
    if (!isDataMethod(method)) throw new AppError('METHOD_NOT_FOUND', `Unknown method ${JSON.stringify(method)}`);
    const tableId = params.tableId as string | undefined;
    switch (method) {
      case 'ui.getContext':
        return { pluginId: id, baseId, tableId: tableId ?? null, recordId: null, selection: null, ...(openContext ?? {}) };
      case 'selection.get':
        return openContext?.selection ?? null;
      case 'config.get':
        return parts.effectiveConfig(id, baseId);
      case 'storage.get':
      case 'storage.set':
      case 'storage.remove':
        return parts.storageCall(id, baseId, method, params);
      case 'table.listTables':
        return gateway.listTables(baseId);
      case 'table.getSchema':
        return gateway.getSchema(await tableInBase(baseId, tableId));
      case 'table.getRecords':
        return gateway.getRecords(await tableInBase(baseId, tableId), {
          page: params.page as number | undefined, perPage: (params.per_page ?? params.perPage) as number | undefined, search: params.search as string | undefined,
        });
      case 'table.getRecord':
      case 'record.update':
      case 'record.delete': {
        if (typeof params.recordId !== 'string' || !params.recordId) throw invalidParams('recordId is required');
        const recordTable = tableId ? await tableInBase(baseId, tableId) : await tableOfRecord(baseId, params.recordId);
        if (!recordTable) throw notFound(`Record ${params.recordId} not found in base ${baseId}`);
        if (method === 'table.getRecord') return gateway.getRecord(recordTable, params.recordId);
        if (method === 'record.delete') return gateway.deleteRecord(recordTable, params.recordId);
        return gateway.updateRecord(recordTable, params.recordId, params.values ?? {});
      }
      case 'record.create':
        return gateway.createRecord(await tableInBase(baseId, tableId), params.values ?? {});
    }
  }

  return {
    tableInBase,
    dataCall,

    /** A data call of a ui plugin, relayed by the browser host, once the pluginMethod scope has passed. */
    async rpc(gateway: PluginDataGateway, id: string, req: RpcRequest): Promise<unknown> {
      const params = req.params === undefined || req.params === null ? {} : req.params;
      if (!isObject(params)) throw invalidParams('params must be an object');
      const openContext = parts.openContext(req.handshakeToken, id, req.baseId);
      return dataCall(gateway, id, req.baseId, req.method, { tableId: req.tableId, ...params }, openContext);
    },
  };
}

export type DataCalls = ReturnType<typeof createDataCalls>;
