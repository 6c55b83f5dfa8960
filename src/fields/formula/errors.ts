// The error of an invalid formula definition: what is wrong and the character offset where it is.

/** Thrown by compileFormula; `position` is the 0-based character offset in the expression, repeated in the message. */
export class FormulaError extends Error {
  readonly position: number;

  constructor(problem: string, position: number) {
    super(`${problem} at position ${position}`);
    this.name = 'FormulaError';
    this.position = position;
  }
}
