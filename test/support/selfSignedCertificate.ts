/**
 * Test support: a fresh self-signed TLS certificate (ECDSA P-256, SHA-256) for one DNS name,
 * made with `node:crypto` alone: the DER of the certificate is written here (a handful of ASN.1
 * types) and signed with the generated key. Valid from a day ago for `validDays`; the name is in
 * the subject and the subjectAltName, and the certificate is its own CA (basicConstraints), so a
 * client trusts it with `ca: cert`. Test use only.
 */
import { generateKeyPairSync, randomBytes, sign } from "node:crypto"

export interface TestCertificate {
  readonly cert: string
  readonly key: string
}

const lengthBytes = (n: number): ReadonlyArray<number> => {
  if (n < 0x80) return [n]
  const bytes: number[] = []
  for (let v = n; v > 0; v = Math.floor(v / 256)) bytes.unshift(v & 0xff)
  return [0x80 | bytes.length, ...bytes]
}

const tlv = (tag: number, ...parts: ReadonlyArray<Uint8Array>): Buffer => {
  const body = Buffer.concat(parts)
  return Buffer.concat([Buffer.from([tag, ...lengthBytes(body.length)]), body])
}
const sequence = (...parts: ReadonlyArray<Uint8Array>) => tlv(0x30, ...parts)

const objectId = (text: string): Buffer => {
  const [first, second, ...rest] = text.split(".").map(Number) as [number, number, ...number[]]
  const bytes = [40 * first + second]
  for (const arc of rest) {
    const groups: number[] = [arc & 0x7f]
    for (let v = Math.floor(arc / 128); v > 0; v = Math.floor(v / 128)) groups.unshift(0x80 | (v & 0x7f))
    bytes.push(...groups)
  }
  return tlv(0x06, Buffer.from(bytes))
}

const utcTime = (d: Date): Buffer => {
  const p = (n: number) => String(n).padStart(2, "0")
  const text = `${p(d.getUTCFullYear() % 100)}${p(d.getUTCMonth() + 1)}${p(d.getUTCDate())}${p(d.getUTCHours())}${p(d.getUTCMinutes())}${p(d.getUTCSeconds())}Z`
  return tlv(0x17, Buffer.from(text, "ascii"))
}

const ECDSA_WITH_SHA256 = "1.2.840.10045.4.3.2"
const COMMON_NAME = "2.5.4.3"
const SUBJECT_ALT_NAME = "2.5.29.17"
const BASIC_CONSTRAINTS = "2.5.29.19"
const DAY_MS = 86_400_000

export const selfSignedCertificate = (dnsName: string, validDays = 30): TestCertificate => {
  const { privateKey, publicKey } = generateKeyPairSync("ec", { namedCurve: "prime256v1" })
  const serial = randomBytes(16)
  serial.writeUInt8(serial.readUInt8(0) & 0x7f, 0) // a positive INTEGER
  const name = sequence(tlv(0x31, sequence(objectId(COMMON_NAME), tlv(0x0c, Buffer.from(dnsName, "utf8")))))
  const now = Date.now()
  const algorithm = sequence(objectId(ECDSA_WITH_SHA256))
  const extensions = tlv(
    0xa3,
    sequence(
      sequence(objectId(SUBJECT_ALT_NAME), tlv(0x04, sequence(tlv(0x82, Buffer.from(dnsName, "ascii"))))),
      sequence(objectId(BASIC_CONSTRAINTS), tlv(0x01, Buffer.from([0xff])), tlv(0x04, sequence(tlv(0x01, Buffer.from([0xff])))))
    )
  )
  const tbs = sequence(
    tlv(0xa0, tlv(0x02, Buffer.from([2]))),
    tlv(0x02, serial),
    algorithm,
    name,
    sequence(utcTime(new Date(now - DAY_MS)), utcTime(new Date(now + validDays * DAY_MS))),
    name,
    publicKey.export({ type: "spki", format: "der" }),
    extensions
  )
  const signature = sign("sha256", tbs, privateKey)
  const der = sequence(tbs, algorithm, tlv(0x03, Buffer.from([0]), signature))
  const lines = der.toString("base64").match(/.{1,64}/g) ?? []
  return {
    cert: `-----BEGIN CERTIFICATE-----\n${lines.join("\n")}\n-----END CERTIFICATE-----\n`,
    key: privateKey.export({ type: "pkcs8", format: "pem" }).toString()
  }
}
