import { describe, expect, it } from "vitest"
import { NODE_MAJOR, unsupportedNode } from "./Runtime.js"

describe("unsupportedNode", () => {
  it("accepts the supported line, with or without the v", () => {
    expect(unsupportedNode(`v${NODE_MAJOR}.23.3`)).toBeUndefined()
    expect(unsupportedNode(`${NODE_MAJOR}.0.0`)).toBeUndefined()
  })
  it("refuses other majors, older and newer, and says how to run instead", () => {
    for (const v of ["v20.20.2", "v21.7.3", "v23.1.0", "v24.0.0", "v2.0.0", "v220.0.0"]) {
      const why = unsupportedNode(v)
      expect(why, v).toContain(v)
      expect(why, v).toContain("npm start")
    }
  })
  it("refuses what it cannot read", () => {
    expect(unsupportedNode("")).toBeDefined()
    expect(unsupportedNode("node")).toBeDefined()
  })
})
