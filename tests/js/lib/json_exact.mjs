// json_exact.mjs - a small strict JSON parser that keeps the source text of numbers, so
// 64-bit integers and decimals survive exactly (Node 20's JSON.parse has no source-text
// access). Objects come back with a null prototype; a key repeated within one object is
// a SyntaxError (floe rejects such records, so the oracle must never pick one).

export class JsonNumber {
  constructor(text) {
    this.text = text
  }
  isInteger() {
    return /^-?(0|[1-9]\d*)$/.test(this.text)
  }
}

export function parseExact(text) {
  let i = 0
  const n = text.length

  function fail(msg) {
    throw new SyntaxError(`JSON: ${msg} at offset ${i}`)
  }
  function ws() {
    while (i < n) {
      const c = text.charCodeAt(i)
      if (c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d) i++
      else break
    }
  }
  function value() {
    ws()
    if (i >= n) fail('unexpected end')
    const c = text[i]
    if (c === '{') return object()
    if (c === '[') return array()
    if (c === '"') return string()
    if (c === 't') return literal('true', true)
    if (c === 'f') return literal('false', false)
    if (c === 'n') return literal('null', null)
    if (c === '-' || (c >= '0' && c <= '9')) return number()
    fail(`unexpected '${c}'`)
  }
  function literal(word, v) {
    if (text.startsWith(word, i)) {
      i += word.length
      return v
    }
    fail('bad literal')
  }
  function number() {
    const m = /-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/y
    m.lastIndex = i
    const r = m.exec(text)
    if (!r) fail('bad number')
    i += r[0].length
    return new JsonNumber(r[0])
  }
  function string() {
    i++ // opening quote
    let out = ''
    let start = i
    while (true) {
      if (i >= n) fail('unterminated string')
      const c = text.charCodeAt(i)
      if (c === 0x22) {
        out += text.slice(start, i)
        i++
        return out
      }
      if (c < 0x20) fail('control character in string')
      if (c === 0x5c) {
        out += text.slice(start, i)
        const e = text[i + 1]
        i += 2
        switch (e) {
          case '"': out += '"'; break
          case '\\': out += '\\'; break
          case '/': out += '/'; break
          case 'b': out += '\b'; break
          case 'f': out += '\f'; break
          case 'n': out += '\n'; break
          case 'r': out += '\r'; break
          case 't': out += '\t'; break
          case 'u': {
            const h = text.slice(i, i + 4)
            if (!/^[0-9a-fA-F]{4}$/.test(h)) fail('bad \\u escape')
            out += String.fromCharCode(parseInt(h, 16))
            i += 4
            break
          }
          default:
            fail('bad escape')
        }
        start = i
      } else {
        i++
      }
    }
  }
  function array() {
    i++
    const out = []
    ws()
    if (text[i] === ']') {
      i++
      return out
    }
    while (true) {
      out.push(value())
      ws()
      if (text[i] === ',') {
        i++
        continue
      }
      if (text[i] === ']') {
        i++
        return out
      }
      fail("expected ',' or ']'")
    }
  }
  function object() {
    i++
    const out = Object.create(null)
    ws()
    if (text[i] === '}') {
      i++
      return out
    }
    while (true) {
      ws()
      if (text[i] !== '"') fail('expected a key')
      const k = string()
      if (Object.prototype.hasOwnProperty.call(out, k)) fail(`duplicate key "${k}"`)
      ws()
      if (text[i] !== ':') fail("expected ':'")
      i++
      out[k] = value()
      ws()
      if (text[i] === ',') {
        i++
        continue
      }
      if (text[i] === '}') {
        i++
        return out
      }
      fail("expected ',' or '}'")
    }
  }

  const v = value()
  ws()
  if (i !== n) fail('trailing characters')
  return v
}
