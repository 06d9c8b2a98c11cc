/**
 * Test support: a fresh self-signed TLS certificate (ECDSA P-256, SHA-256) for one DNS name, made
 * by a kept library (`@peculiar/x509` on Node's WebCrypto, its default provider) rather than DER
 * written by hand: the hand-written encoder put a non-minimal serial INTEGER in about one
 * certificate in 256, which OpenSSL refuses ("illegal padding"). Valid from a day ago for
 * `validDays`; the name is in the subject and the subjectAltName, and the certificate is its own CA
 * (basicConstraints), so a client trusts it with `ca: cert`. Test use only.
 */
import { KeyObject, webcrypto } from "node:crypto"
// The library's dependency injection (tsyringe) needs the Reflect metadata API, loaded before it.
import "reflect-metadata"
import * as x509 from "@peculiar/x509"

export interface TestCertificate {
  readonly cert: string
  readonly key: string
}

const DAY_MS = 86_400_000
const ALGORITHM = { name: "ECDSA", namedCurve: "P-256", hash: "SHA-256" } as const

export const selfSignedCertificate = async (dnsName: string, validDays = 30): Promise<TestCertificate> => {
  const keys = await webcrypto.subtle.generateKey(ALGORITHM, true, ["sign", "verify"])
  const now = Date.now()
  const certificate = await x509.X509CertificateGenerator.createSelfSigned({
    name: [{ CN: [dnsName] }],
    notBefore: new Date(now - DAY_MS),
    notAfter: new Date(now + validDays * DAY_MS),
    signingAlgorithm: ALGORITHM,
    keys,
    extensions: [new x509.SubjectAlternativeNameExtension([{ type: "dns", value: dnsName }]), new x509.BasicConstraintsExtension(true, undefined, true)]
  })
  return {
    cert: certificate.toString("pem"),
    key: KeyObject.from(keys.privateKey).export({ type: "pkcs8", format: "pem" }).toString()
  }
}
