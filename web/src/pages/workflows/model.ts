// The workflow editor's model: server shapes, an editable draft per trigger and node, and the conversions between them.
import type { FieldRef } from '../../data';
import { parseJsonText } from '../../ui/format';

export type TriggerType = 'record_created' | 'record_updated' | 'manual';
export type NodeType = 'condition' | 'update_record' | 'create_record' | 'http_request' | 'run_script';

export interface WorkflowNode { id: string; type: NodeType; config: Record<string, any> }
export interface Workflow {
  id: string;
  name: string;
  tableId: string;
  enabled: boolean;
  trigger: { type: TriggerType; config: Record<string, any> };
  nodes: WorkflowNode[];
  createdAt: string;
  updatedAt: string;
}
export const WORKFLOW_FIELDS = 'id name tableId enabled trigger { type config } nodes { id type config } createdAt updatedAt';

export interface RunStep { node_id: string; type: string; status: string; started_at: string | null; finished_at: string | null; output: unknown; error: string | null }
export interface WorkflowRun {
  runId: string; status: string; triggerType: string; recordId: string | null; depth: number;
  queuedAt: string; startedAt: string | null; finishedAt: string | null; error: string | null; steps: RunStep[];
}
export const RUN_FIELDS = 'runId status triggerType recordId depth queuedAt startedAt finishedAt error steps';

export const TRIGGERS: Array<{ type: TriggerType; label: string; description: string }> = [
  { type: 'record_created', label: 'When a record is created', description: 'Runs for every new record of the table.' },
  { type: 'record_updated', label: 'When a record is updated', description: 'Runs when watched fields really change (any field when none is chosen).' },
  { type: 'manual', label: 'Manually', description: 'Runs only when someone runs it for a record.' },
];
export const triggerLabel = (t: string) => TRIGGERS.find((x) => x.type === t)?.label ?? t;

export const NODE_TYPES: Array<{ type: NodeType; label: string; icon: string; description: string }> = [
  { type: 'condition', label: 'Condition', icon: '◇', description: 'Continue only when the record matches a filter; otherwise the run ends successfully.' },
  { type: 'update_record', label: 'Update record', icon: '✎', description: 'Write values into the triggering record.' },
  { type: 'create_record', label: 'Create record', icon: '+', description: 'Create a record in a table of this base.' },
  { type: 'http_request', label: 'HTTP request', icon: '⇄', description: 'Call a public URL; a non-2xx answer fails the step.' },
  { type: 'run_script', label: 'Run script', icon: '⚙', description: 'Run a script plugin in the sandbox with the record in its context.' },
];
export const nodeMeta = (t: string) => NODE_TYPES.find((x) => x.type === t) ?? { type: t as NodeType, label: t, icon: '•', description: '' };

export const HTTP_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD'];

export interface ValueRow { field: string; text: string }
export interface HeaderRow { name: string; value: string }

/** One node as the editor holds it: text the user types, converted when saved. */
export interface NodeDraft {
  key: number;
  id: string;
  type: NodeType;
  filterText: string;
  rows: ValueRow[];
  tableId: string;
  url: string;
  method: string;
  headers: HeaderRow[];
  bodyText: string;
  pluginId: string;
  paramsText: string;
}

export interface TriggerDraft { type: TriggerType; fields: string[]; conditionOn: boolean; conditionText: string }

let nextKey = 1;
const isTemplate = (s: string) => /\{\{[^{}]*\}\}/.test(s);

/** Text for a field value in a row: arrays of plain strings as "a, b", other non-strings as JSON. */
export function valueToText(v: unknown): string {
  if (v === null || v === undefined) return '';
  if (typeof v === 'string') return v;
  if (Array.isArray(v) && v.every((x) => typeof x === 'string' && !x.includes(','))) return v.join(', ');
  return JSON.stringify(v);
}

/** A row's text as the value the field takes: numbers, booleans and lists are converted unless the text is a template. */
export function textToValue(text: string, field: FieldRef | undefined): unknown {
  const t = text.trim();
  if (t === '') return null;
  if (isTemplate(text)) return text;
  const type = field?.type ?? 'text';
  if (type === 'number' || type === 'rating') {
    const n = Number(t);
    return Number.isFinite(n) ? n : text;
  }
  if (type === 'checkbox') {
    if (/^(true|yes|1|on)$/i.test(t)) return true;
    if (/^(false|no|0|off)$/i.test(t)) return false;
    return text;
  }
  if (type === 'multi_select' || type === 'link') {
    if (t.startsWith('[')) {
      const r = parseJsonText(t);
      if (r.ok) return r.value;
    }
    return t.split(',').map((s) => s.trim()).filter(Boolean);
  }
  return text;
}

function rowsOf(fields: unknown): ValueRow[] {
  if (!fields || typeof fields !== 'object') return [];
  return Object.entries(fields as Record<string, unknown>).map(([field, v]) => ({ field, text: valueToText(v) }));
}

export function emptyNode(type: NodeType, id: string): NodeDraft {
  return {
    key: nextKey++, id, type, filterText: '', rows: type === 'update_record' || type === 'create_record' ? [{ field: '', text: '' }] : [], tableId: '',
    url: '', method: type === 'http_request' ? 'POST' : 'GET', headers: [], bodyText: '', pluginId: '', paramsText: '',
  };
}

export function nodeToDraft(n: WorkflowNode): NodeDraft {
  const c = n.config ?? {};
  const d = emptyNode(n.type, n.id);
  d.rows = [];
  switch (n.type) {
    case 'condition': d.filterText = c.filter === undefined ? '' : JSON.stringify(c.filter, null, 2); break;
    case 'update_record': d.rows = rowsOf(c.fields); break;
    case 'create_record': d.tableId = c.table_id ?? ''; d.rows = rowsOf(c.fields); break;
    case 'http_request':
      d.url = c.url ?? '';
      d.method = String(c.method ?? 'GET').toUpperCase();
      d.headers = Object.entries((c.headers ?? {}) as Record<string, string>).map(([name, value]) => ({ name, value: String(value) }));
      d.bodyText = c.body === undefined || c.body === null ? '' : typeof c.body === 'string' ? c.body : JSON.stringify(c.body, null, 2);
      break;
    case 'run_script': d.pluginId = c.plugin_id ?? ''; d.paramsText = c.params === undefined ? '' : JSON.stringify(c.params, null, 2); break;
  }
  return d;
}

export class DraftError extends Error {
  constructor(readonly nodeIndex: number | null, message: string) {
    super(message);
  }
}

/** Converts a node draft into the definition the server takes; throws DraftError for text that cannot be read. */
export function draftToNode(d: NodeDraft, index: number, fieldsOf: (tableId: string | null) => FieldRef[]): WorkflowNode {
  const where = `Step ${index + 1}`;
  const values = (rows: ValueRow[], fields: FieldRef[]) => {
    const out: Record<string, unknown> = {};
    for (const r of rows) {
      if (!r.field) {
        if (r.text.trim()) throw new DraftError(index, `${where}: choose the field for the value "${r.text}"`);
        continue;
      }
      out[r.field] = textToValue(r.text, fields.find((f) => f.name === r.field));
    }
    return out;
  };
  switch (d.type) {
    case 'condition': {
      const r = parseJsonText(d.filterText, { expect: 'any' });
      if (!r.ok) throw new DraftError(index, `${where}: the filter ${r.error === 'Required' ? 'is required' : `is not valid JSON (${r.error})`}`);
      return { id: d.id, type: d.type, config: { filter: r.value } };
    }
    case 'update_record':
      return { id: d.id, type: d.type, config: { fields: values(d.rows, fieldsOf(null)) } };
    case 'create_record':
      return { id: d.id, type: d.type, config: { table_id: d.tableId, fields: values(d.rows, fieldsOf(d.tableId)) } };
    case 'http_request': {
      const config: Record<string, unknown> = { url: d.url.trim(), method: d.method };
      const headers = Object.fromEntries(d.headers.filter((h) => h.name.trim()).map((h) => [h.name.trim(), h.value]));
      if (Object.keys(headers).length) config.headers = headers;
      const body = d.bodyText.trim();
      if (body) {
        // JSON objects and arrays are sent as JSON; anything else as text.
        const r = body.startsWith('{') || body.startsWith('[') ? parseJsonText(body) : null;
        if (r && !r.ok) throw new DraftError(index, `${where}: the body looks like JSON but does not parse (${r.error})`);
        config.body = r && r.ok ? r.value : d.bodyText;
      }
      return { id: d.id, type: d.type, config };
    }
    case 'run_script': {
      const config: Record<string, unknown> = { plugin_id: d.pluginId };
      const r = parseJsonText(d.paramsText, { expect: 'object', allowEmpty: true });
      if (!r.ok) throw new DraftError(index, `${where}: params ${r.error}`);
      if (r.value !== undefined) config.params = r.value;
      return { id: d.id, type: d.type, config };
    }
  }
}

export function triggerToDraft(t: Workflow['trigger']): TriggerDraft {
  const c = t.config ?? {};
  return {
    type: t.type, fields: Array.isArray(c.fields) ? [...c.fields] : [],
    conditionOn: c.condition !== undefined, conditionText: c.condition === undefined ? '' : JSON.stringify(c.condition, null, 2),
  };
}

export function draftToTrigger(d: TriggerDraft): Workflow['trigger'] {
  const config: Record<string, unknown> = {};
  if (d.type === 'record_updated' && d.fields.length) config.fields = [...d.fields];
  if (d.conditionOn) {
    const r = parseJsonText(d.conditionText);
    if (!r.ok) throw new DraftError(null, `Trigger condition ${r.error === 'Required' ? 'is empty' : `is not valid JSON (${r.error})`}`);
    config.condition = r.value;
  }
  return { type: d.type, config };
}

/** A node id not used yet: n1, n2, ... */
export function freshNodeId(nodes: Array<{ id: string }>): string {
  const used = new Set(nodes.map((n) => n.id));
  let i = nodes.length + 1;
  while (used.has(`n${i}`)) i++;
  return `n${i}`;
}

/** An example filter naming the table's first field, for the "insert example" buttons. */
export function exampleFilter(fields: FieldRef[]): string {
  const f = fields.find((x) => ['text', 'long_text', 'email', 'url', 'phone'].includes(x.type)) ?? fields[0];
  const condition = !f ? { field: 'Name', operator: 'is_not_empty' }
    : ['number', 'rating'].includes(f.type) ? { field: f.name, operator: 'gt', value: 0 }
      : f.type === 'checkbox' ? { field: f.name, operator: 'eq', value: true }
        : f.type === 'single_select' && f.options?.length ? { field: f.name, operator: 'eq', value: f.options[0] }
          : ['text', 'long_text', 'email', 'url', 'phone'].includes(f.type) ? { field: f.name, operator: 'contains', value: 'urgent' }
            : { field: f.name, operator: 'is_not_empty' };
  return JSON.stringify({ conjunction: 'and', conditions: [condition] }, null, 2);
}

/** Templates offered in a value of node `index`: the record's fields, its id, now, and outputs of earlier steps. */
export function templatesFor(fields: FieldRef[], earlier: Array<{ id: string; type: NodeType }>): Array<{ label: string; value: string; group: string }> {
  const out = fields.map((f) => ({ label: f.name, value: `{{record.${f.name}}}`, group: 'Record' }));
  out.push({ label: 'record id', value: '{{record.id}}', group: 'Record' }, { label: 'now', value: '{{now}}', group: 'Time' });
  const outputs: Record<NodeType, string[]> = {
    condition: ['matched'], update_record: ['id'], create_record: ['id'], http_request: ['status', 'body'], run_script: ['result'],
  };
  for (const n of earlier) for (const path of outputs[n.type] ?? []) out.push({ label: `${n.id}.${path}`, value: `{{steps.${n.id}.${path}}}`, group: 'Earlier steps' });
  return out;
}
