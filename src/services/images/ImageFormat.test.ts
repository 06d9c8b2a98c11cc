/** Signature sniffing: each accepted type, near misses, and types that are refused. */
import { describe, expect, it } from "vitest"
import { sniffFormat } from "./ImageFormat.js"

const bytes = (...parts: ReadonlyArray<string | ReadonlyArray<number>>): Uint8Array =>
  Uint8Array.from(parts.flatMap((p) => (typeof p === "string" ? Array.from(p, (c) => c.charCodeAt(0)) : [...p])))

describe("sniffFormat", () => {
  it.each([
    ["png", bytes([0x89], "PNG", [0x0d, 0x0a, 0x1a, 0x0a], "rest"), "png"],
    ["jpeg", bytes([0xff, 0xd8, 0xff, 0xe0]), "jpeg"],
    ["gif87a", bytes("GIF87a", [1, 0]), "gif"],
    ["gif89a", bytes("GIF89a"), "gif"],
    ["webp", bytes("RIFF", [0, 0, 0, 0], "WEBPVP8 "), "webp"],
    ["png missing last signature byte", bytes([0x89], "PNG", [0x0d, 0x0a, 0x1a]), undefined],
    ["jpeg without the third marker byte", bytes([0xff, 0xd8, 0x00]), undefined],
    ["gif88a", bytes("GIF88a"), undefined],
    ["RIFF that is not WEBP (a WAV)", bytes("RIFF", [0, 0, 0, 0], "WAVEfmt "), undefined],
    ["svg", bytes('<svg xmlns="http://www.w3.org/2000/svg"/>'), undefined],
    ["tiff", bytes("II*", [0]), undefined],
    ["avif", bytes([0, 0, 0, 0x20], "ftypavif"), undefined],
    ["empty", bytes(), undefined],
    ["html", bytes("<!doctype html>"), undefined]
  ])("%s -> %s", (_name, input, want) => {
    expect(sniffFormat(input)).toBe(want)
  })
})
