import { render } from "preact"
import { useState } from "preact/hooks"
import { dataKey, setDataKey } from "./api.js"
import { Markets } from "./pages/Markets.js"
import { Token } from "./pages/Token.js"
import { Signals } from "./pages/Signals.js"
import { Lab } from "./pages/Lab.js"
import { onLink, useRoute } from "./router.js"
import "./style.css"

const KeyField = () => {
  const [key, setKey] = useState(dataKey())
  const [open, setOpen] = useState(false)
  return (
    <div class="keyfield">
      <button type="button" aria-expanded={open} onClick={() => setOpen(!open)}>
        {key === "" ? "Add data key" : "Data key ✓"}
      </button>
      {open && (
        <form
          onSubmit={(e) => {
            e.preventDefault()
            const v = (new FormData(e.currentTarget).get("key") ?? "").toString().trim()
            setDataKey(v)
            setKey(v)
            setOpen(false)
            location.reload()
          }}
        >
          <label>
            Agent key for the market-data service (printed by <code>npm start</code>, also in{" "}
            <code>data/local-credentials.json</code>)
            <input name="key" type="password" autoComplete="off" value={key} />
          </label>
          <button type="submit">Save</button>
        </form>
      )}
    </div>
  )
}

const App = () => {
  const route = useRoute()
  const nav = (href: string, label: string, current: boolean) => (
    <a href={href} onClick={onLink} aria-current={current ? "page" : undefined}>
      {label}
    </a>
  )
  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header>
        <strong class="brand">curvestream</strong>
        <nav aria-label="Pages">
          {nav("/", "Markets", route.page === "markets")}
          {nav("/signals", "Signals", route.page === "signals")}
          {nav("/lab", "Strategy lab", route.page === "lab")}
        </nav>
        <KeyField />
      </header>
      <main id="main" tabIndex={-1}>
        {route.page === "markets" && <Markets />}
        {route.page === "token" && <Token key={`${route.chain}:${route.mint}`} chain={route.chain} mint={route.mint} />}
        {route.page === "signals" && <Signals />}
        {route.page === "lab" && <Lab />}
        {route.page === "missing" && <p>No page at {route.path}.</p>}
      </main>
    </>
  )
}

render(<App />, document.getElementById("app")!)
