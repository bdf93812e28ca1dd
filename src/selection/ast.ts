/**
 * The parsed form of a document selection. Two kinds of node: boolean nodes (what `and`/`or`/`not` combine)
 * and value nodes (what comparisons and arithmetic work on). Every node keeps its source position.
 */

export type ComparisonOperator = '==' | '!=' | '<' | '<=' | '>' | '>=' | '=' | '=~';
export type ArithmeticOperator = '+' | '-' | '*' | '/' | '%';
export type IdPart = 'scheme' | 'namespace' | 'type' | 'specific' | 'user' | 'group';
export type FunctionName = 'lowercase' | 'abs';

/** One step of a field path below the top-level field. */
export type PathStep =
  | { kind: 'field'; name: string } // struct member: a.b
  | { kind: 'key'; key: string } // map lookup: m{key}
  | { kind: 'index'; index: number }; // array element: arr[2]

export type BoolNode =
  | { kind: 'constant'; value: boolean; position: number }
  | { kind: 'doctype'; type: string; position: number }
  | { kind: 'not'; operand: BoolNode; position: number }
  | { kind: 'and' | 'or'; left: BoolNode; right: BoolNode; position: number }
  | { kind: 'compare'; op: ComparisonOperator; left: ValueNode; right: ValueNode; position: number };

export type ValueNode =
  | { kind: 'null'; position: number }
  | { kind: 'number'; value: number; float: boolean; position: number }
  | { kind: 'string'; value: string; position: number }
  | { kind: 'now'; position: number }
  | { kind: 'id'; part: IdPart | undefined; position: number }
  | { kind: 'field'; type: string; field: string; path: PathStep[]; position: number }
  | { kind: 'arith'; op: ArithmeticOperator; left: ValueNode; right: ValueNode; position: number }
  | { kind: 'negate'; operand: ValueNode; position: number }
  | { kind: 'call'; name: FunctionName; operand: ValueNode; position: number };
