// The formula language of computed fields (contract section 12): evaluation, blanks, dates, types, errors with offsets,
// and the stored-by-id form. Pure unit tests of src/fields/formula: no server, no database.
import { describe, expect, it } from 'vitest';
import {
  compileFormula, displayFormula, formulaTypeOfField, FormulaError, type FieldRef, type FormulaType,
} from '../src/fields/formula/index.js';

// A zone with daylight saving: date results must not move with the process's zone (it is UTC everywhere).
process.env.TZ = 'Europe/Berlin';

const FIELDS: FieldRef[] = [
  { id: 'fldHours0001', name: 'Hours', type: 'number' },
  { id: 'fldPrice0001', name: 'Price', type: 'number' },
  { id: 'fldQty000001', name: 'Qty', type: 'number' },
  { id: 'fldName00001', name: 'Name', type: 'text' },
  { id: 'fldDone00001', name: 'Done', type: 'boolean' },
  { id: 'fldDue000001', name: 'Due', type: 'date' },
  { id: 'fldStart0001', name: 'Start', type: 'date' },
  { id: 'fldTags00001', name: 'Tags', type: 'text' },
  { id: 'fldSpace0001', name: 'Unit price (EUR)', type: 'number' },
  { id: 'fldOdd000001', name: 'a}b', type: 'number' },
  // A name shaped like another field's id: the id wins when it is written in braces.
  { id: 'fldLooksId01', name: 'fldHours0001', type: 'text' },
];
const ID_OF = new Map(FIELDS.map((f) => [f.name, f.id]));
const NAME_OF = new Map(FIELDS.map((f) => [f.id, f.name]));

type Rec = Record<string, unknown>;

/** Compiles `expr` and evaluates it for a record given by field name. */
function run(expr: string, rec: Rec = {}) {
  const f = compileFormula(expr, FIELDS);
  return f.evaluate((id) => rec[NAME_OF.get(id) ?? '']);
}

/** The FormulaError that compiling `expr` throws. */
function failure(expr: string): FormulaError {
  try {
    compileFormula(expr, FIELDS);
  } catch (err) {
    if (err instanceof FormulaError) return err;
    throw err;
  }
  throw new Error(`${expr} compiled`);
}

type Case = [expr: string, rec: Rec, expected: number | string | boolean | null];

function table(title: string, cases: Case[]) {
  describe(title, () => {
    it.each(cases)('%s with %j → %j', (expr, rec, expected) => {
      expect(run(expr, rec)).toBe(expected);
    });
  });
}

table('literals and escapes', [
  ['12', {}, 12],
  ['1.5', {}, 1.5],
  ['.5', {}, 0.5],
  ['1e3', {}, 1000],
  ['2.5E-1', {}, 0.25],
  ['"hello"', {}, 'hello'],
  ['"say \\"hi\\""', {}, 'say "hi"'],
  ['"back\\\\slash"', {}, 'back\\slash'],
  ['"{Hours}"', { Hours: 3 }, '{Hours}'],
  ['""', {}, null],
  ['TRUE', {}, true],
  ['FALSE', {}, false],
  ['true', {}, true],
  ['False', {}, false],
  ['  1 +\n\t2  ', {}, 3],
]);

table('arithmetic and unary minus', [
  ['1 + 2', {}, 3],
  ['5 - 7', {}, -2],
  ['6 * 7', {}, 42],
  ['7 / 2', {}, 3.5],
  ['-5', {}, -5],
  ['--5', {}, 5],
  ['2 - -3', {}, 5],
  ['-{Hours}', { Hours: 0 }, 0],
  ['{Price} * {Qty}', { Price: 2.5, Qty: 4 }, 10],
  ['0.1 + 0.2', {}, 0.30000000000000004],
  ['1 / 0', {}, null],
  ['0 / 0', {}, null],
  ['{Hours} / {Qty}', { Hours: 8, Qty: 0 }, null],
  ['1e308 * 10', {}, null],
  ['{Hours} + 1', {}, null],
  ['{Hours} * 2', { Hours: null }, null],
  ['1 - {Hours}', {}, null],
  ['-{Hours}', {}, null],
  ['{Price} * {Qty}', { Price: 3 }, null],
]);

table('precedence, associativity and parentheses', [
  ['1 + 2 * 3', {}, 7],
  ['(1 + 2) * 3', {}, 9],
  ['10 - 4 - 3', {}, 3],
  ['10 - (4 - 3)', {}, 9],
  ['64 / 4 / 2', {}, 8],
  ['64 / (4 / 2)', {}, 32],
  ['2 * 3 + 4 * 5', {}, 26],
  ['-2 * -3', {}, 6],
  ['-(2 + 3) * 2', {}, -10],
  ['1 + 2 & 3', {}, '33'],
  ['"a" & 1 + 2', {}, 'a3'],
  ['2 * 3 & 4', {}, '64'],
  ['"a" & "b" & "c"', {}, 'abc'],
  ['1 & 2 = "12"', {}, true],
  ['1 + 1 = 2', {}, true],
  ['2 * 3 > 5', {}, true],
  ['(1 < 2) = TRUE', {}, true],
  ['((((7))))', {}, 7],
]);

table('comparison operators', [
  ['2 = 2', {}, true],
  ['2 = 3', {}, false],
  ['2 != 2', {}, false],
  ['2 != 3', {}, true],
  ['1 < 2', {}, true],
  ['2 < 2', {}, false],
  ['2 <= 2', {}, true],
  ['3 <= 2', {}, false],
  ['3 > 2', {}, true],
  ['2 > 2', {}, false],
  ['2 >= 3', {}, false],
  ['3 >= 3', {}, true],
  ['"abc" = "abc"', {}, true],
  ['"a" = "A"', {}, false],
  ['"a" < "b"', {}, true],
  ['"B" < "a"', {}, true],
  ['TRUE = TRUE', {}, true],
  ['TRUE != FALSE', {}, true],
  ['{Done} = FALSE', { Done: false }, true],
  ['{Hours} > 8', { Hours: 9 }, true],
  ['{Hours} > 8', {}, null],
  ['{Hours} <= {Qty}', { Hours: 1 }, null],
]);

table('blank in comparisons: it equals only another blank', [
  ['{Hours} = BLANK()', {}, true],
  ['{Hours} = BLANK()', { Hours: 0 }, false],
  ['{Hours} != BLANK()', { Hours: 5 }, true],
  ['{Hours} = 0', {}, false],
  ['{Hours} != 0', {}, true],
  ['{Name} = BLANK()', { Name: '' }, true],
  ['{Name} = ""', {}, true],
  ['{Name} = BLANK()', { Name: ' ' }, false],
  ['{Tags} = BLANK()', { Tags: [] }, true],
  ['{Done} = BLANK()', { Done: false }, false],
  ['{Done} = FALSE', {}, false],
  ['{Due} = BLANK()', {}, true],
  ['BLANK() = BLANK()', {}, true],
  ['{Hours} = {Qty}', {}, true],
  ['{Hours} = {Qty}', { Qty: 1 }, false],
]);

table('text concatenation with &', [
  ['"a" & "b"', {}, 'ab'],
  ['"n=" & 1.5', {}, 'n=1.5'],
  ['"x" & TRUE', {}, 'xTRUE'],
  ['{Due} & ""', { Due: '2024-01-31' }, '2024-01-31'],
  ['{Start} & ""', { Start: '2024-01-31T08:00:00.000Z' }, '2024-01-31T08:00:00.000Z'],
  ['{Name} & "x"', {}, 'x'],
  ['"x" & {Hours}', {}, 'x'],
  ['{Name} & {Name}', {}, null],
  ['"" & ""', {}, null],
  ['"a" & {Tags}', { Tags: ['x', 'y'] }, 'ax, y'],
  ['{Name} & " " & {Price}', { Name: 'Pen', Price: 2 }, 'Pen 2'],
]);

table('IF, AND, OR, NOT, BLANK', [
  ['IF({Hours} > 8, "long", "short")', { Hours: 9 }, 'long'],
  ['IF({Hours} > 8, "long", "short")', { Hours: 8 }, 'short'],
  ['IF({Hours} > 8, "long", "short")', {}, 'short'],
  ['IF(TRUE, 1, 2)', {}, 1],
  ['IF(FALSE, 1, 2)', {}, 2],
  ['IF(FALSE, 1)', {}, null],
  ['IF(TRUE, 1)', {}, 1],
  ['IF({Done}, "y", "n")', {}, 'n'],
  ['IF({Done}, "y", "n")', { Done: true }, 'y'],
  ['IF(TRUE, BLANK(), 1)', {}, null],
  ['IF(TRUE, 1 / 0, 2)', {}, null],
  ['IF(FALSE, 1 / 0, 2)', {}, 2],
  ['AND(TRUE, TRUE)', {}, true],
  ['AND(TRUE, FALSE)', {}, false],
  ['AND(TRUE)', {}, true],
  ['AND(TRUE, {Done})', {}, false],
  ['OR(FALSE, TRUE)', {}, true],
  ['OR(FALSE, FALSE)', {}, false],
  ['OR(FALSE, {Done})', {}, false],
  ['OR({Done}, 1 > 2, 3 > 2)', {}, true],
  ['NOT(TRUE)', {}, false],
  ['NOT(FALSE)', {}, true],
  ['NOT({Done})', {}, true],
  ['BLANK()', {}, null],
]);

table('SUM, AVERAGE, MIN, MAX skip blanks', [
  ['SUM(1, 2, 3)', {}, 6],
  ['SUM({Hours}, 2, {Price})', { Price: 3 }, 5],
  ['SUM({Hours})', {}, 0],
  ['SUM(1e308, 1e308)', {}, null],
  ['AVERAGE(2, 4)', {}, 3],
  ['AVERAGE(2, {Hours}, 4)', {}, 3],
  ['AVERAGE({Hours})', {}, null],
  ['MIN(3, 1, 2)', {}, 1],
  ['MIN(3, {Hours}, 1)', {}, 1],
  ['MIN({Hours})', {}, null],
  ['MAX(3, {Hours}, 7)', {}, 7],
  ['MAX(-1, -5)', {}, -1],
  ['MAX({Hours}, {Qty})', {}, null],
  ['MAX({Due}, {Start})', { Due: '2024-01-02', Start: '2024-01-01T23:00:00.000Z' }, '2024-01-02'],
  ['MIN({Due}, {Start})', { Due: '2024-01-02', Start: '2024-01-01T23:00:00.000Z' }, '2024-01-01T23:00:00.000Z'],
  ['MIN({Due}, "2024-01-01")', { Due: '2024-05-01' }, '2024-01-01'],
  ['MAX({Due}, {Start})', { Start: '2024-01-01' }, '2024-01-01'],
]);

table('ROUND (half away from zero) and ABS', [
  ['ROUND(2.5, 0)', {}, 3],
  ['ROUND(-2.5, 0)', {}, -3],
  ['ROUND(1.4, 0)', {}, 1],
  ['ROUND(1.005, 2)', {}, 1.01],
  ['ROUND(-1.005, 2)', {}, -1.01],
  ['ROUND(1234.5678, 2)', {}, 1234.57],
  ['ROUND(1250, -2)', {}, 1300],
  ['ROUND(-1250, -2)', {}, -1300],
  ['ROUND(2.5, 0.9)', {}, 3],
  ['ROUND(-0.4, 0)', {}, 0],
  ['ROUND({Hours}, 1)', {}, null],
  ['ROUND(2.345, {Hours})', {}, null],
  ['ABS(-3)', {}, 3],
  ['ABS(2.5)', {}, 2.5],
  ['ABS({Hours})', {}, null],
]);

table('text functions, blank read as ""', [
  ['CONCAT("a", 1, TRUE, {Name})', {}, 'a1TRUE'],
  ['CONCAT({Name})', {}, null],
  ['CONCAT({Due}, "!")', { Due: '2024-01-31' }, '2024-01-31!'],
  ['LEN("héllo")', {}, 5],
  ['LEN("😀a")', {}, 2],
  ['LEN({Name})', {}, 0],
  ['LEN("")', {}, 0],
  ['LEN({Tags})', { Tags: ['ab', 'c'] }, 5],
  ['UPPER("abc")', {}, 'ABC'],
  ['UPPER({Name})', {}, null],
  ['LOWER("ÀB")', {}, 'àb'],
  ['LOWER({Name})', {}, null],
  ['TRIM("  a b  ")', {}, 'a b'],
  ['TRIM("   ")', {}, null],
  ['TRIM({Name})', {}, null],
  ['LEFT("hello", 2)', {}, 'he'],
  ['LEFT("hi", 10)', {}, 'hi'],
  ['LEFT("abc", 1.9)', {}, 'a'],
  ['LEFT("abc", 0)', {}, null],
  ['LEFT("abc", -1)', {}, null],
  ['LEFT("😀😀x", 1)', {}, '😀'],
  ['LEFT({Name}, 2)', {}, null],
  ['LEFT("abc", {Hours})', {}, null],
  ['RIGHT("hello", 3)', {}, 'llo'],
  ['RIGHT("😀ab", 3)', {}, '😀ab'],
  ['RIGHT("x😀", 1)', {}, '😀'],
  ['RIGHT({Name}, 1)', {}, null],
]);

table('function names are case-insensitive', [
  ['if(TRUE, 1, 2)', {}, 1],
  ['Sum(1, 2)', {}, 3],
  ['round(2.5, 0)', {}, 3],
  ['lower("A") & Upper("b")', {}, 'aB'],
  ['datetime_diff("2024-01-03", "2024-01-01", "days")', {}, 2],
  ['DateAdd("2024-01-01", 1, "Days")', {}, '2024-01-02'],
  ['not(blank() = 1)', {}, true],
]);

table('DATETIME_DIFF: a − b in whole units, truncated toward zero, UTC', [
  ['DATETIME_DIFF("2024-03-01", "2024-02-01", "days")', {}, 29],
  ['DATETIME_DIFF("2023-03-01", "2023-02-01", "days")', {}, 28],
  ['DATETIME_DIFF({Due}, {Start}, "days")', { Due: '2024-01-10', Start: '2024-01-01T12:00:00.000Z' }, 8],
  ['DATETIME_DIFF({Due}, {Start}, "days")', { Due: '2024-01-01', Start: '2024-01-10T12:00:00.000Z' }, -9],
  ['DATETIME_DIFF({Due}, {Start}, "hours")', { Due: '2024-01-01T10:30:00.000Z', Start: '2024-01-01T08:00:00.000Z' }, 2],
  ['DATETIME_DIFF({Due}, {Start}, "hours")', { Due: '2024-01-01T08:00:00.000Z', Start: '2024-01-01T10:30:00.000Z' }, -2],
  ['DATETIME_DIFF({Due}, {Start}, "minutes")', { Due: '2024-01-01T10:30:00.000Z', Start: '2024-01-01T08:00:00.000Z' }, 150],
  ['DATETIME_DIFF({Due}, {Start}, "minutes")', { Due: '2024-01-01T08:00:00.000Z', Start: '2024-01-01T08:00:59.000Z' }, 0],
  ['DATETIME_DIFF("2024-01-01T00:00:00Z", "2024-01-01T01:00:00Z", "days")', {}, 0],
  ['DATETIME_DIFF("2024-03-31", "2024-03-30", "hours")', {}, 24],
  ['DATETIME_DIFF("2024-10-28", "2024-10-27", "hours")', {}, 24],
  ['DATETIME_DIFF({Due}, "2024-01-01", "DAYS")', { Due: '2024-01-05' }, 4],
  ['DATETIME_DIFF({Due}, {Start}, "days")', { Due: '2024-01-05' }, null],
  ['DATETIME_DIFF({Due}, {Start}, "days")', { Start: '2024-01-05' }, null],
  ['DATETIME_DIFF({Due}, "2024-01-01", "hours")', { Due: '2024-01-01T02:00:00+02:00' }, 0],
]);

table('DATEADD: month ends, year ends, UTC without daylight saving', [
  ['DATEADD("2024-01-31", 1, "days")', {}, '2024-02-01'],
  ['DATEADD("2024-02-28", 1, "days")', {}, '2024-02-29'],
  ['DATEADD("2023-02-28", 1, "days")', {}, '2023-03-01'],
  ['DATEADD("2024-12-31", 1, "days")', {}, '2025-01-01'],
  ['DATEADD("2024-03-01", -1, "days")', {}, '2024-02-29'],
  ['DATEADD("2024-01-31", 30, "days")', {}, '2024-03-01'],
  ['DATEADD("2024-03-30", 1, "days")', {}, '2024-03-31'],
  ['DATEADD("2024-03-30T12:00:00.000Z", 1, "days")', {}, '2024-03-31T12:00:00.000Z'],
  ['DATEADD("2024-10-26T12:00:00.000Z", 24, "hours")', {}, '2024-10-27T12:00:00.000Z'],
  ['DATEADD("2024-01-01", 2, "hours")', {}, '2024-01-01T02:00:00.000Z'],
  ['DATEADD("2024-01-01", 0.5, "days")', {}, '2024-01-01T12:00:00.000Z'],
  ['DATEADD("2024-01-31T23:30:00.000Z", 45, "minutes")', {}, '2024-02-01T00:15:00.000Z'],
  ['DATEADD({Due}, -90, "minutes")', { Due: '2024-03-01' }, '2024-02-29T22:30:00.000Z'],
  ['DATEADD({Due}, 1, "days")', {}, null],
  ['DATEADD({Due}, {Hours}, "days")', { Due: '2024-01-01' }, null],
  ['DATEADD({Due}, 1, "days") > {Due}', { Due: '2024-01-01' }, true],
]);

table('dates compare as instants; text literals are read as dates where a date is expected', [
  ['{Due} = {Start}', { Due: '2024-01-01', Start: '2024-01-01T00:00:00.000Z' }, true],
  ['{Due} < {Start}', { Due: '2024-01-01', Start: '2024-01-01T00:00:01.000Z' }, true],
  ['{Due} > "2024-01-01"', { Due: '2024-01-02' }, true],
  ['"2024-06-01" > {Due}', { Due: '2024-01-02' }, true],
  ['{Due} = "2024-01-01"', { Due: '2024-01-01T02:00:00+02:00' }, true],
  ['{Due} >= "2024-01-01T12:00:00Z"', { Due: '2024-01-01' }, false],
  ['IF({Done}, {Due}, "2024-12-31")', {}, '2024-12-31'],
  ['IF({Done}, {Due}, "2024-12-31")', { Done: true, Due: '2024-02-03' }, '2024-02-03'],
]);

table('input values are read as their formula type', [
  ['{Tags}', { Tags: ['b', 'a'] }, 'b, a'],
  ['{Tags}', { Tags: [] }, null],
  ['{Tags}', { Tags: ['a', null, ''] }, 'a'],
  ['{Tags}', { Tags: [1, 2.5, true] }, '1, 2.5, TRUE'],
  ['{Name} & ""', { Name: 5 }, '5'],
  ['{Hours} + 1', { Hours: '7' }, 8],
  ['{Hours} + 1', { Hours: 'seven' }, null],
  ['{Hours} + 1', { Hours: Number.NaN }, null],
  ['{Done} = BLANK()', { Done: 'yes' }, true],
  ['{Due} = BLANK()', { Due: 'soon' }, true],
  ['{Due} = BLANK()', { Due: '2024-02-30' }, true],
  ['{Due}', { Due: '2024-02-29' }, '2024-02-29'],
  ['{Due}', { Due: '2024-02-29T10:00:00+01:00' }, '2024-02-29T09:00:00.000Z'],
  ['{Unit price (EUR)} * 2', { 'Unit price (EUR)': 1.5 }, 3],
  ['{ Hours } + 1', { Hours: 1 }, 2],
  ['{fldOdd000001} + 1', { 'a}b': 1 }, 2],
]);

describe('result types are inferred', () => {
  const cases: [string, FormulaType][] = [
    ['{Price} * {Qty}', 'number'],
    ['IF({Hours} > 8, "long", "short")', 'text'],
    ['{Hours} > 8', 'boolean'],
    ['DATEADD({Due}, 1, "days")', 'date'],
    ['BLANK()', 'text'],
    ['IF(TRUE, BLANK(), 1)', 'number'],
    ['MAX({Due}, {Start})', 'date'],
    ['{Name} & 1', 'text'],
    ['LEN("a")', 'number'],
    ['NOT(TRUE)', 'boolean'],
    ['{Tags}', 'text'],
    ['DATETIME_DIFF({Due}, {Start}, "days")', 'number'],
    ['IF(TRUE, "2024-01-01", {Due})', 'date'],
    ['{Done}', 'boolean'],
  ];
  it.each(cases)('%s is %s', (expr, type) => {
    expect(compileFormula(expr, FIELDS).resultType).toBe(type);
  });
});

describe('invalid definitions name the problem and its offset', () => {
  const cases: [expr: string, problem: string, position: number][] = [
    // unknown names
    ['IF({Hourz} > 8, "long", "short")', 'unknown field {Hourz}', 3],
    ['{hours} + 1', 'unknown field {hours}', 0],
    ['1 + {fldNope123}', 'unknown field {fldNope123}', 4],
    ['{a}b} + 1', 'unexpected character } (a field whose name contains } is referenced by its id)', 4],
    ['{a} + 1', 'unknown field {a}', 0],
    ['FOO(1)', 'unknown function FOO', 0],
    ['1 + sqrt(4)', 'unknown function sqrt', 4],
    // syntax
    ['(1 + 2', 'unclosed (', 0],
    ['IF(TRUE, 1, 2', 'unclosed (', 2],
    ['SUM(1, (2', 'unclosed (', 7],
    ['"abc', 'unterminated string', 0],
    ['1 & "abc', 'unterminated string', 4],
    ['"abc\\"', 'unterminated string', 0],
    ['"a\\n"', 'unknown escape \\n', 2],
    ['1 + 2 )', 'unexpected )', 6],
    ['1 2', 'unexpected 2', 2],
    ['(1) (2)', 'unexpected (', 4],
    ['IF(TRUE, 1, 2) x', 'unexpected x', 15],
    ['"a" "b"', 'unexpected string "b"', 4],
    ['1 {Hours}', 'unexpected field reference {Hours}', 2],
    ['', 'empty expression', 0],
    ['   ', 'empty expression', 0],
    ['1 +', 'unexpected end of expression', 3],
    ['* 2', 'unexpected *', 0],
    ['1 % 2', 'unexpected character %', 2],
    ['1 == 2', 'unexpected =', 3],
    ['IF(TRUE,,2)', 'unexpected ,', 8],
    ['SUM(1,)', 'unexpected )', 6],
    ['1.2.3', 'unexpected .3', 3],
    ['{Hours', 'unclosed field reference', 0],
    ['1 + {}', 'empty field reference', 4],
    ['Hours + 1', 'unexpected name Hours', 0],
    ['1 < 2 < 3', 'comparisons do not chain', 6],
    ['1 = 1 = TRUE', 'comparisons do not chain', 6],
    ['(1 < 2 >= 3)', 'comparisons do not chain', 7],
    ['1e999', 'number out of range', 0],
    ['-'.repeat(300) + '1', 'nested too deeply', 200],
    // argument counts
    ['IF(TRUE)', 'IF takes 2 or 3 arguments, got 1', 0],
    ['IF(TRUE, 1, 2, 3)', 'IF takes 2 or 3 arguments, got 4', 0],
    ['1 + if(TRUE)', 'IF takes 2 or 3 arguments, got 1', 4],
    ['NOT()', 'NOT takes exactly 1 argument, got 0', 0],
    ['NOT(TRUE, FALSE)', 'NOT takes exactly 1 argument, got 2', 0],
    ['BLANK(1)', 'BLANK takes exactly 0 arguments, got 1', 0],
    ['AND()', 'AND takes at least 1 argument, got 0', 0],
    ['OR()', 'OR takes at least 1 argument, got 0', 0],
    ['SUM()', 'SUM takes at least 1 argument, got 0', 0],
    ['AVERAGE()', 'AVERAGE takes at least 1 argument, got 0', 0],
    ['MIN()', 'MIN takes at least 1 argument, got 0', 0],
    ['MAX()', 'MAX takes at least 1 argument, got 0', 0],
    ['ROUND(1)', 'ROUND takes exactly 2 arguments, got 1', 0],
    ['ABS(1, 2)', 'ABS takes exactly 1 argument, got 2', 0],
    ['CONCAT()', 'CONCAT takes at least 1 argument, got 0', 0],
    ['LEN()', 'LEN takes exactly 1 argument, got 0', 0],
    ['UPPER("a", "b")', 'UPPER takes exactly 1 argument, got 2', 0],
    ['LOWER()', 'LOWER takes exactly 1 argument, got 0', 0],
    ['TRIM()', 'TRIM takes exactly 1 argument, got 0', 0],
    ['LEFT("a")', 'LEFT takes exactly 2 arguments, got 1', 0],
    ['RIGHT("a", 1, 2)', 'RIGHT takes exactly 2 arguments, got 3', 0],
    ['DATETIME_DIFF({Due}, {Start})', 'DATETIME_DIFF takes exactly 3 arguments, got 2', 0],
    ['DATEADD({Due}, 1)', 'DATEADD takes exactly 3 arguments, got 2', 0],
    // types
    ['1 + "a"', 'operator + expects a number, got text', 4],
    ['"a" * 2', 'operator * expects a number, got text', 0],
    ['-"a"', 'unary - expects a number, got text', 1],
    ['{Name} - 1', 'operator - expects a number, got text', 0],
    ['{Done} + 1', 'operator + expects a number, got a boolean', 0],
    ['{Due} / 2', 'operator / expects a number, got a date', 0],
    ['(1 & 2) + 3', 'operator + expects a number, got text', 1],
    ['1 + 2 & 3 * "x"', 'operator * expects a number, got text', 12],
    ['IF({Hours} > 8, {Name} * 2, 0)', 'operator * expects a number, got text', 16],
    ['1 = "1"', 'operator = cannot mix a number with text', 2],
    ['{Due} < 5', 'operator < cannot mix a date with a number', 6],
    ['{Due} = "soon"', 'operator = cannot mix a date with text', 6],
    ['TRUE < FALSE', 'operator < orders numbers, text or dates, not a boolean', 5],
    ['IF(1, 2, 3)', 'IF condition expects a boolean, got a number', 3],
    ['IF({Name}, 1, 2)', 'IF condition expects a boolean, got text', 3],
    ['IF(TRUE, 1, "a")', 'IF branches cannot mix a number with text', 12],
    ['AND(TRUE, 1)', 'AND argument 2 expects a boolean, got a number', 10],
    ['OR("x")', 'OR argument 1 expects a boolean, got text', 3],
    ['NOT("a")', 'NOT expects a boolean, got text', 4],
    ['SUM(1, "2")', 'SUM argument 2 expects a number, got text', 7],
    ['AVERAGE({Done})', 'AVERAGE argument 1 expects a number, got a boolean', 8],
    ['MIN({Due}, 3)', 'MIN argument 2 expects a date, got a number', 11],
    ['MAX(1, {Name})', 'MAX argument 2 expects a number, got text', 7],
    ['ROUND("1", 2)', 'ROUND argument 1 expects a number, got text', 6],
    ['ABS(TRUE)', 'ABS expects a number, got a boolean', 4],
    ['LEN(5)', 'LEN expects text, got a number', 4],
    ['UPPER({Hours})', 'UPPER expects text, got a number', 6],
    ['TRIM({Due})', 'TRIM expects text, got a date', 5],
    ['LEFT("abc", "2")', 'LEFT argument 2 expects a number, got text', 12],
    ['DATETIME_DIFF({Name}, {Due}, "days")', 'DATETIME_DIFF argument 1 expects a date, got text', 14],
    ['DATETIME_DIFF("tomorrow", {Due}, "days")', 'DATETIME_DIFF argument 1 expects a date, got text "tomorrow"', 14],
    ['DATEADD({Due}, "1", "days")', 'DATEADD argument 2 expects a number, got text', 15],
    ['DATEADD({Due}, 1, "weeks")', 'unknown unit "weeks" for DATEADD', 18],
    ['DATETIME_DIFF({Due}, {Start}, "")', 'unknown unit "" for DATETIME_DIFF', 30],
    ['DATETIME_DIFF({Due}, {Start}, {Name})', 'DATETIME_DIFF takes its unit as a literal', 30],
  ];
  it.each(cases)('%s → %s at %i', (expr, problem, position) => {
    const err = failure(expr);
    expect(err.message).toContain(problem);
    expect(err.message).toMatch(new RegExp(` at position ${position}$`));
    expect(err.position).toBe(position);
  });

  it('is thrown as a FormulaError, an Error with a name', () => {
    const err = failure('{Nope}');
    expect(err).toBeInstanceOf(Error);
    expect(err.name).toBe('FormulaError');
    expect(err.message).toBe('unknown field {Nope} at position 0');
  });

  it('accepts nesting up to the limit', () => {
    expect(run('('.repeat(150) + '1' + ')'.repeat(150))).toBe(1);
    expect(failure('('.repeat(10_000) + '1' + ')'.repeat(10_000)).message).toContain('nested too deeply');
    expect(failure(Array(1000).fill('1').join(' + ')).message).toContain('nested too deeply');
  });
});

describe('references: by name or id, stored by id, shown with current names', () => {
  it('stores every reference by id and lists each referenced field once, in order of appearance', () => {
    const f = compileFormula('{Price} * {Qty} + {Price} - {fldHours0001}', FIELDS);
    expect(f.stored).toBe('{fldPrice0001} * {fldQty000001} + {fldPrice0001} - {fldHours0001}');
    expect(f.references).toEqual(['fldPrice0001', 'fldQty000001', 'fldHours0001']);
  });

  it('keeps everything else as written, string literals that look like references included', () => {
    const f = compileFormula('IF( {Hours}>8 ,\n "{Hours}" , "x\\"{Qty}")', FIELDS);
    expect(f.stored).toBe('IF( {fldHours0001}>8 ,\n "{Hours}" , "x\\"{Qty}")');
    expect(f.references).toEqual(['fldHours0001']);
  });

  it('reads {fld...} as a field id before a field of that name', () => {
    const f = compileFormula('{fldHours0001}', FIELDS);
    expect(f.references).toEqual(['fldHours0001']);
    expect(f.resultType).toBe('number');
  });

  it('a formula with no reference has none', () => {
    const f = compileFormula('1 + 1', FIELDS);
    expect(f.references).toEqual([]);
    expect(f.stored).toBe('1 + 1');
  });

  it('survives a rename: the stored form shows the new name and compiles to the same stored form', () => {
    const stored = compileFormula('IF({Hours} > 8, {Name} & "!", "short")', FIELDS).stored;
    const renamed = FIELDS.map((f) => (f.id === 'fldHours0001' ? { ...f, name: 'Work time' } : f));
    const names = new Map(renamed.map((f) => [f.id, f.name]));
    const shown = displayFormula(stored, (id) => names.get(id));
    expect(shown).toBe('IF({Work time} > 8, {Name} & "!", "short")');
    const again = compileFormula(shown, renamed);
    expect(again.stored).toBe(stored);
    expect(again.evaluate((id) => (id === 'fldHours0001' ? 9 : id === 'fldName00001' ? 'Ann' : null))).toBe('Ann!');
    expect(compileFormula(stored, renamed).evaluate((id) => (id === 'fldHours0001' ? 1 : null))).toBe('short');
    expect(() => compileFormula('{Hours}', renamed)).toThrow('unknown field {Hours} at position 0');
  });

  it('display leaves unknown ids, string literals and malformed tails alone', () => {
    const nameOf = (id: string) => NAME_OF.get(id);
    expect(displayFormula('{fldGone00001} + {fldQty000001}', nameOf)).toBe('{fldGone00001} + {Qty}');
    expect(displayFormula('"{fldQty000001}" & "\\"{fldQty000001}"', nameOf)).toBe('"{fldQty000001}" & "\\"{fldQty000001}"');
    expect(displayFormula('{fldQty000001} & "abc', nameOf)).toBe('{Qty} & "abc');
    expect(displayFormula('{fldQty000001} + {fldQty', nameOf)).toBe('{Qty} + {fldQty');
  });

  it('display keeps the id of a field whose name could not be read back', () => {
    const stored = compileFormula('{fldOdd000001} + 1 & {fldLooksId01}', FIELDS).stored;
    expect(displayFormula(stored, (id) => NAME_OF.get(id))).toBe('{fldOdd000001} + 1 & {fldLooksId01}');
    expect(displayFormula('{fldQty000001}', () => '  ')).toBe('{fldQty000001}');
  });

  it('display of names that are safe round-trips through compile for every field', () => {
    for (const f of FIELDS) {
      const stored = compileFormula(`{${f.id}}`, FIELDS).stored;
      const shown = displayFormula(stored, (id) => NAME_OF.get(id));
      expect(compileFormula(shown, FIELDS).references).toEqual([f.id]);
    }
  });

  it('refers to the same field by name or id with the same result', () => {
    const rec = (id: string) => (id === ID_OF.get('Price') ? 4 : null);
    expect(compileFormula('{Price} * 2', FIELDS).evaluate(rec)).toBe(8);
    expect(compileFormula('{fldPrice0001} * 2', FIELDS).evaluate(rec)).toBe(8);
  });
});

describe('evaluation', () => {
  it('one compiled formula evaluates many records independently', () => {
    const f = compileFormula('IF({Hours} > 8, "long", "short") & " " & {Hours}', FIELDS);
    const results = [9, 3, null, 8.5].map((h) => f.evaluate((id) => (id === 'fldHours0001' ? h : null)));
    expect(results).toEqual(['long 9', 'short 3', 'short ', 'long 8.5']);
  });

  it('reads only the fields it references', () => {
    const asked: string[] = [];
    compileFormula('IF({Done}, {Price}, {Qty})', FIELDS).evaluate((id) => { asked.push(id); return id === 'fldDone00001' ? true : 1; });
    expect(asked).toEqual(['fldDone00001', 'fldPrice0001']);
  });

  it('runs in a zone with daylight saving (the date tests above would fail on local-time arithmetic)', () => {
    expect(new Date(2024, 0, 1).getTimezoneOffset()).toBe(-60);
    expect(new Date(2024, 6, 1).getTimezoneOffset()).toBe(-120);
  });
});

describe('field types a formula reads, and as which formula type', () => {
  const cases: [string, FormulaType | undefined, FormulaType | undefined][] = [
    ['text', undefined, 'text'], ['long_text', undefined, 'text'], ['email', undefined, 'text'], ['url', undefined, 'text'],
    ['phone', undefined, 'text'], ['single_select', undefined, 'text'], ['user', undefined, 'text'],
    ['multi_select', undefined, 'text'], ['link', undefined, 'text'], ['lookup', undefined, 'text'],
    ['number', undefined, 'number'], ['rating', undefined, 'number'], ['autonumber', undefined, 'number'],
    ['count', undefined, 'number'], ['rollup', undefined, 'number'], ['rollup', 'text', 'text'],
    ['checkbox', undefined, 'boolean'],
    ['date', undefined, 'date'], ['created_time', undefined, 'date'], ['last_modified_time', undefined, 'date'],
    ['formula', 'boolean', 'boolean'], ['formula', undefined, undefined],
    ['attachment', undefined, undefined], ['toString', undefined, undefined],
  ];
  it.each(cases)('%s (result %s) → %s', (type, result, expected) => {
    expect(formulaTypeOfField(type, result)).toBe(expected);
  });
});
