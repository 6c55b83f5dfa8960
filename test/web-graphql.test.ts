// Every GraphQL document of the web app validates against the schema, so a renamed field or a changed argument type
// breaks this test rather than a page. The documents are found statically: each call of the api helper `gql` in
// web/src (its first argument, with constants, imported constants and `.map(...).join(...)` builders resolved), and
// every other string that starts like an operation (`query`, `mutation`, `subscription`).
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildSchema, parse, printSchema, validate, type GraphQLSchema } from 'graphql';
import ts from 'typescript';
import { parse as parseSfc } from 'vue/compiler-sfc';
import { describe, expect, it } from 'vitest';
import { schema } from '../schema/index.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const WEB = path.resolve(here, '../web/src');
const API = path.join(WEB, 'api.ts');
/** The helper that runs GraphQL in web/src/api.ts. */
const HELPER = 'gql';
const MAX_VARIANTS = 64;

/** One script of a web file: a .ts file, or a <script> / <script setup> block of a .vue file. */
interface Script {
  file: string;
  source: ts.SourceFile;
  /** The other script block of the same .vue file (a setup block sees the plain block's top level). */
  sibling?: Script;
  /** Where the block starts in the .vue file, for line numbers. */
  lineOffset: number;
}

interface WebDocument {
  where: string;
  document: string;
}

class Unresolved extends Error {}

function listFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) return listFiles(full);
    return /\.(ts|vue)$/.test(e.name) && !e.name.endsWith('.d.ts') ? [full] : [];
  });
}

const scriptCache = new Map<string, Script[]>();
function scriptsOf(file: string): Script[] {
  const cached = scriptCache.get(file);
  if (cached) return cached;
  const text = fs.readFileSync(file, 'utf8');
  let scripts: Script[];
  if (file.endsWith('.vue')) {
    const { descriptor, errors } = parseSfc(text, { filename: file });
    if (errors.length) throw new Error(`${file}: ${errors.map((e) => e.message).join('; ')}`);
    scripts = [descriptor.script, descriptor.scriptSetup].filter((b) => b !== null).map((b) => ({
      file,
      source: ts.createSourceFile(file, b.content, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS),
      lineOffset: b.loc.start.line - 1,
    }));
    if (scripts.length === 2) [scripts[0].sibling, scripts[1].sibling] = [scripts[1], scripts[0]];
  } else {
    scripts = [{ file, source: ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS), lineOffset: 0 }];
  }
  scriptCache.set(file, scripts);
  return scripts;
}

function where(script: Script, node: ts.Node): string {
  const { line } = script.source.getLineAndCharacterOfPosition(node.getStart(script.source));
  return `${path.relative(path.resolve(here, '..'), script.file)}:${line + 1 + script.lineOffset}`;
}

/** A relative import's file: `../api` is web/src/api.ts, `./X.vue` a component. */
function resolveModule(from: string, specifier: string): string | null {
  if (!specifier.startsWith('.')) return null;
  const base = path.resolve(path.dirname(from), specifier);
  for (const candidate of [base, `${base}.ts`, `${base}.vue`, path.join(base, 'index.ts')]) {
    if (fs.existsSync(candidate) && fs.statSync(candidate).isFile()) return candidate;
  }
  return null;
}

/** The module and exported name an imported local name comes from. */
function importOf(script: Script, local: string): { file: string; name: string } | null {
  for (const s of [script, script.sibling].filter((x): x is Script => !!x)) {
    for (const st of s.source.statements) {
      if (!ts.isImportDeclaration(st) || !ts.isStringLiteral(st.moduleSpecifier)) continue;
      const bindings = st.importClause?.namedBindings;
      if (!bindings || !ts.isNamedImports(bindings)) continue;
      for (const el of bindings.elements) {
        if (el.name.text !== local) continue;
        const file = resolveModule(s.file, st.moduleSpecifier.text);
        if (!file) throw new Unresolved(`${where(s, el)}: ${local} comes from ${st.moduleSpecifier.text}, outside web/src`);
        return { file, name: (el.propertyName ?? el.name).text };
      }
    }
  }
  return null;
}

function constIn(statements: ts.NodeArray<ts.Statement>, name: string): ts.VariableDeclaration | null {
  for (const st of statements) {
    if (!ts.isVariableStatement(st)) continue;
    for (const d of st.declarationList.declarations) {
      if (ts.isIdentifier(d.name) && d.name.text === name) {
        if (!(st.declarationList.flags & ts.NodeFlags.Const) || !d.initializer) throw new Unresolved(`${name} is not a const with a value`);
        return d;
      }
    }
  }
  return null;
}

/** An exported const of a module (following `export { X } from` re-exports). */
function exportedConst(file: string, name: string, seen = new Set<string>()): { script: Script; node: ts.Expression } {
  const key = `${file}#${name}`;
  if (seen.has(key)) throw new Unresolved(`${key}: circular export`);
  seen.add(key);
  for (const script of scriptsOf(file)) {
    for (const st of script.source.statements) {
      if (ts.isVariableStatement(st) && st.modifiers?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword)) {
        const d = constIn(ts.factory.createNodeArray([st]), name);
        if (d) return { script, node: d.initializer! };
      }
      if (ts.isExportDeclaration(st) && st.exportClause && ts.isNamedExports(st.exportClause)) {
        for (const el of st.exportClause.elements) {
          if (el.name.text !== name) continue;
          const inner = (el.propertyName ?? el.name).text;
          if (st.moduleSpecifier && ts.isStringLiteral(st.moduleSpecifier)) {
            const target = resolveModule(file, st.moduleSpecifier.text);
            if (!target) throw new Unresolved(`${key}: re-exported from outside web/src`);
            return exportedConst(target, inner, seen);
          }
          const d = constIn(script.source.statements, inner);
          if (d) return { script, node: d.initializer! };
        }
      }
    }
  }
  throw new Unresolved(`${path.relative(WEB, file)} exports no const ${name}`);
}

const isFunction = (n: ts.Node): n is ts.ArrowFunction | ts.FunctionExpression | ts.FunctionDeclaration | ts.MethodDeclaration =>
  ts.isArrowFunction(n) || ts.isFunctionExpression(n) || ts.isFunctionDeclaration(n) || ts.isMethodDeclaration(n);

/** A callback passed to `.map(...)`: its parameters stand for one item and index, sampled as "0". */
const isMapCallback = (fn: ts.Node) =>
  ts.isCallExpression(fn.parent) && ts.isPropertyAccessExpression(fn.parent.expression) && fn.parent.expression.name.text === 'map' && fn.parent.arguments[0] === fn;

/** Every string a node can evaluate to: literals, templates, `+`, consts (local or imported), `?:` and `xs.map(f).join(s)`. */
function evaluate(script: Script, node: ts.Expression, visited: Set<ts.Node>): string[] {
  visited.add(node);
  const cap = (xs: string[]) => {
    if (xs.length > MAX_VARIANTS) throw new Unresolved(`${where(script, node)}: more than ${MAX_VARIANTS} variants`);
    return xs;
  };
  const product = (parts: string[][]) => cap(parts.reduce<string[]>((acc, p) => acc.flatMap((a) => p.map((b) => a + b)), ['']));
  if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) return [node.text];
  if (ts.isTemplateExpression(node)) {
    return product([[node.head.text], ...node.templateSpans.flatMap((s) => [evaluate(script, s.expression, visited), [s.literal.text]])]);
  }
  if (ts.isParenthesizedExpression(node) || ts.isAsExpression(node) || ts.isSatisfiesExpression(node) || ts.isNonNullExpression(node)) {
    return evaluate(script, node.expression, visited);
  }
  if (ts.isBinaryExpression(node) && node.operatorToken.kind === ts.SyntaxKind.PlusToken) {
    return product([evaluate(script, node.left, visited), evaluate(script, node.right, visited)]);
  }
  if (ts.isConditionalExpression(node)) return cap([...evaluate(script, node.whenTrue, visited), ...evaluate(script, node.whenFalse, visited)]);
  if (ts.isNumericLiteral(node)) return [node.text];
  if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression) && node.expression.name.text === 'join') {
    const list = node.expression.expression;
    const sep = node.arguments[0] ? evaluate(script, node.arguments[0], visited) : [','];
    if (ts.isArrayLiteralExpression(list)) {
      return product(list.elements.flatMap((e, i) => (i ? [sep, evaluate(script, e, visited)] : [evaluate(script, e, visited)])));
    }
    // xs.map(cb).join(sep): one sample item, built by the callback's returned string.
    if (ts.isCallExpression(list) && ts.isPropertyAccessExpression(list.expression) && list.expression.name.text === 'map') {
      const cb = list.arguments[0];
      if (cb && (ts.isArrowFunction(cb) || ts.isFunctionExpression(cb))) {
        if (!ts.isBlock(cb.body)) return evaluate(script, cb.body, visited);
        const returns: ts.Expression[] = [];
        const walk = (n: ts.Node) => {
          if (isFunction(n)) return;
          if (ts.isReturnStatement(n) && n.expression) returns.push(n.expression);
          ts.forEachChild(n, walk);
        };
        ts.forEachChild(cb.body, walk);
        if (returns.length) return cap(returns.flatMap((r) => evaluate(script, r, visited)));
      }
    }
  }
  if (ts.isIdentifier(node)) return evaluate(...resolveIdentifier(script, node), visited);
  throw new Unresolved(`${where(script, node)}: cannot read a GraphQL document from \`${node.getText(script.source)}\``);
}

/** The sample value of a map callback's parameter, or the const a name is bound to in scope, in the file or imported. */
function resolveIdentifier(script: Script, id: ts.Identifier): [Script, ts.Expression] {
  const name = id.text;
  for (let n: ts.Node = id.parent; n; n = n.parent) {
    if (isFunction(n) && n.parameters.some((p) => ts.isIdentifier(p.name) && p.name.text === name)) {
      if (isMapCallback(n)) return [script, ts.factory.createStringLiteral('0')];
      throw new Unresolved(`${where(script, id)}: ${name} is a parameter; pass a document the test can read`);
    }
    if (ts.isBlock(n) || ts.isSourceFile(n) || ts.isModuleBlock(n) || ts.isCaseClause(n) || ts.isDefaultClause(n)) {
      const d = constIn(n.statements, name);
      if (d) return [script, d.initializer!];
    }
  }
  if (script.sibling) {
    const d = constIn(script.sibling.source.statements, name);
    if (d) return [script.sibling, d.initializer!];
  }
  const imported = importOf(script, name);
  if (imported) {
    const { script: s, node } = exportedConst(imported.file, imported.name);
    return [s, node];
  }
  throw new Unresolved(`${where(script, id)}: ${name} is not a const in scope`);
}

/** The local names the api helper goes by in a script (`import { gql as q } from '../api'`). */
function helperNames(script: Script): Set<string> {
  const names = new Set<string>(script.file === API ? [HELPER] : []);
  for (const st of script.source.statements) {
    if (!ts.isImportDeclaration(st) || !ts.isStringLiteral(st.moduleSpecifier)) continue;
    if (resolveModule(script.file, st.moduleSpecifier.text) !== API) continue;
    const bindings = st.importClause?.namedBindings;
    if (bindings && ts.isNamedImports(bindings)) {
      for (const el of bindings.elements) if ((el.propertyName ?? el.name).text === HELPER) names.add(el.name.text);
    }
  }
  return names;
}

interface Extraction {
  documents: WebDocument[];
  problems: string[];
  /** Files that import the helper, with how many calls were found in each. */
  callsByFile: Map<string, number>;
}

/** Finds every GraphQL document of web/src. */
function extractWebDocuments(): Extraction {
  const documents: WebDocument[] = [];
  const problems: string[] = [];
  const callsByFile = new Map<string, number>();
  const visited = new Set<ts.Node>();
  const files = listFiles(WEB);

  for (const file of files) {
    for (const script of scriptsOf(file)) {
      const names = new Set([...helperNames(script), ...(script.sibling ? helperNames(script.sibling) : [])]);
      if (!names.size) continue;
      const rel = path.relative(WEB, file);
      callsByFile.set(rel, callsByFile.get(rel) ?? 0);
      const visit = (n: ts.Node) => {
        if (ts.isCallExpression(n)) {
          const callee = n.expression;
          const named = ts.isIdentifier(callee) ? callee.text : ts.isPropertyAccessExpression(callee) ? callee.name.text : null;
          if (named !== null && names.has(named) && !(ts.isPropertyAccessExpression(callee) && named !== HELPER)) {
            callsByFile.set(rel, callsByFile.get(rel)! + 1);
            const arg = n.arguments[0];
            if (!arg) problems.push(`${where(script, n)}: ${named}() without a document`);
            else {
              try {
                for (const document of evaluate(script, arg, visited)) documents.push({ where: where(script, n), document });
              } catch (e) {
                if (!(e instanceof Unresolved)) throw e;
                problems.push(`${where(script, n)}: ${e.message}`);
              }
            }
          }
        }
        ts.forEachChild(n, visit);
      };
      visit(script.source);
    }
  }

  // Operations written anywhere else (a document kept in a const, passed through another helper, ...).
  for (const file of files) {
    for (const script of scriptsOf(file)) {
      const visit = (n: ts.Node) => {
        if ((ts.isStringLiteral(n) || ts.isNoSubstitutionTemplateLiteral(n) || ts.isTemplateExpression(n)) && !visited.has(n)) {
          const head = ts.isTemplateExpression(n) ? n.head.text : n.text;
          if (/^\s*(query|mutation|subscription)\b\s*[A-Za-z_({]/.test(head)) {
            try {
              for (const document of evaluate(script, n, visited)) documents.push({ where: where(script, n), document });
            } catch (e) {
              if (!(e instanceof Unresolved)) throw e;
              problems.push(e.message);
            }
          }
        }
        ts.forEachChild(n, visit);
      };
      visit(script.source);
    }
  }
  return { documents, problems, callsByFile };
}

/** Parse and validation errors of the documents against a schema, as `where: message`. */
function validateDocuments(target: GraphQLSchema, documents: WebDocument[]): string[] {
  return documents.flatMap(({ where: at, document }) => {
    try {
      return validate(target, parse(document)).map((e) => `${at}: ${e.message}`);
    } catch (e) {
      return [`${at}: ${(e as Error).message}`];
    }
  });
}

describe('the web app\'s GraphQL documents', () => {
  const { documents, problems, callsByFile } = extractWebDocuments();

  it('are all found: every call of the api helper has a document the test can read', () => {
    expect(problems).toEqual([]);
    expect([...callsByFile.values()].reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(40);
    for (const [file, calls] of callsByFile) expect(calls, `${file} imports ${HELPER} but no call was found`).toBeGreaterThan(0);
    expect(documents.length).toBeGreaterThanOrEqual(40);
    // Spot checks that the extraction reads what the pages send: a literal, a constant and a built document.
    expect(documents.some((d) => d.where.startsWith('web/src/api.ts') && /login\(/.test(d.document))).toBe(true);
    expect(documents.some((d) => /workflows\(tableId: \$t0/.test(d.document))).toBe(true);
  });

  it('validate against the schema', () => {
    expect(validateDocuments(schema, documents)).toEqual([]);
  });

  it('would fail on a renamed field or a changed argument type', () => {
    const sdl = printSchema(schema);
    // Table.name renamed to title.
    const renamed = sdl.replace(/(type Table \{[^}]*\n {2})name:/, '$1title:');
    expect(renamed).not.toBe(sdl);
    expect(validateDocuments(buildSchema(renamed), documents).some((e) => e.includes('Cannot query field "name" on type "Table"'))).toBe(true);
    // createRecord's tableId typed differently from the $t: ID! the pages declare.
    const retyped = sdl.replace(/createRecord\(fields: JSON!, tableId: ID!\)/, 'createRecord(fields: JSON!, tableId: Int!)');
    expect(retyped).not.toBe(sdl);
    expect(validateDocuments(buildSchema(retyped), documents).some((e) => /Variable "\$\w+" of type "ID!" used in position expecting type "Int!"/.test(e))).toBe(true);
  });
});
