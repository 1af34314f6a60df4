/** The tree hogqlParser.ts builds and hogqlCompiler.ts compiles. */

export type CompareOp =
  | '='
  | '!='
  | '<'
  | '<='
  | '>'
  | '>='
  | 'like'
  | 'ilike'
  | 'not like'
  | 'not ilike';
export type ArithOp = '+' | '-' | '*' | '/' | '%';

export type Expr =
  | { kind: 'constant'; value: string | number | bigint | boolean | null }
  | { kind: 'field'; chain: string[] }
  | { kind: 'call'; name: string; args: Expr[]; distinct: boolean; star: boolean }
  | { kind: 'compare'; op: CompareOp; left: Expr; right: Expr }
  | { kind: 'in'; negated: boolean; left: Expr; list: Expr[] }
  | { kind: 'isNull'; negated: boolean; expr: Expr }
  | { kind: 'and' | 'or'; args: Expr[] }
  | { kind: 'not'; expr: Expr }
  | { kind: 'arith'; op: ArithOp; left: Expr; right: Expr }
  | { kind: 'neg'; expr: Expr };
