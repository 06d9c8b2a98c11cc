/**
 * README's configuration table and `.env.example` name every variable the engine reads, and the
 * defaults in `.env.example` are accepted by the configuration (so copying it changes nothing).
 */
import { ConfigProvider, Effect } from "effect"
import { readFileSync } from "node:fs"
import { describe, expect, it } from "vitest"
import { appConfig, ConfigVariables } from "../../src/config/AppConfig.js"
import { projectRoot } from "../support/engine.js"

const readme = readFileSync(projectRoot + "README.md", "utf8")
const envExample = readFileSync(projectRoot + ".env.example", "utf8")

const exampleValues = (): Map<string, string> => {
  const values = new Map<string, string>()
  for (const line of envExample.split("\n")) {
    const m = /^([A-Z][A-Z0-9_]*)=(.*)$/.exec(line)
    if (m !== null) values.set(m[1]!, m[2]!)
  }
  return values
}

describe("configuration documents", () => {
  it("README names every variable", () => {
    expect(ConfigVariables.filter((v) => !readme.includes(`\`${v}\``))).toEqual([])
  })

  it(".env.example sets every variable", () => {
    const values = exampleValues()
    expect(ConfigVariables.filter((v) => !values.has(v))).toEqual([])
    expect([...values.keys()].filter((k) => !(ConfigVariables as ReadonlyArray<string>).includes(k))).toEqual([])
  })

  it(".env.example's values are the defaults", async () => {
    const fromExample = await Effect.runPromise(
      Effect.withConfigProvider(appConfig, ConfigProvider.fromMap(exampleValues()))
    )
    const defaults = await Effect.runPromise(Effect.withConfigProvider(appConfig, ConfigProvider.fromMap(new Map())))
    expect(fromExample).toEqual(defaults)
  })

  it("refuses invalid values naming the variable", async () => {
    const bad = (k: string, v: string) =>
      Effect.runPromise(Effect.flip(Effect.withConfigProvider(appConfig, ConfigProvider.fromMap(new Map([[k, v]])))))
    expect(String(await bad("PLAN_OVERRIDES", '{"gold":{}}'))).toContain("PLAN_OVERRIDES")
    expect(String(await bad("DEV_BUY_MAX_WEI", "0.5"))).toContain("DEV_BUY_MAX_WEI")
    expect(String(await bad("BUS_PARTITIONS", "0"))).toContain("BUS_PARTITIONS")
    expect(String(await bad("LOG_FORMAT", "xml"))).toContain("LOG_FORMAT")
    expect(String(await bad("RESET_CHAIN_STATE", "solana,ethereum"))).toContain("RESET_CHAIN_STATE")
    expect(String(await bad("LOCAL_ACCOUNT", "yes"))).toContain("LOCAL_ACCOUNT must be true or false")
  })
})
