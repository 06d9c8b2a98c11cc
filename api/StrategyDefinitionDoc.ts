/**
 * A strategy definition as the OpenAPI documents show it (issue 32 item 1): the strategy lab's
 * replay body, a strategy's create and version bodies, and each stored version's `definition`.
 * The JSON Schema is the decoder's own (`StrategyDefinition`, `src/services/strategy/Definition.ts`,
 * whose scalars, lists and entry carry `jsonSchema` annotations), so the document cannot drift from
 * what the engine accepts; the value stays `unknown` to the route and view types, since a stored
 * version is the definition as it was sent (a USD amount as a number or a decimal string).
 */
import { Schema, SchemaAST } from "effect"
import { StrategyDefinition } from "../src/services/strategy/Definition.js"

/** `unknown` to TypeScript, the definition's closed JSON Schema (component `StrategyDefinition`) to the document. */
export const StrategyDefinitionDoc = Schema.Unknown.annotations({
  identifier: "StrategyDefinition",
  description:
    "A strategy definition (spec 2.7): chain, entry, exit and sizing. Unknown fields are refused; cross-field rules (a conviction entry needs exit.ladder, pct_of_equity needs sizing.base_usd, min below max) are checked by the engine and named in the refusal's field.",
  [SchemaAST.SurrogateAnnotationId]: StrategyDefinition.ast
})
