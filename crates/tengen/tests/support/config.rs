//! The daemon configurations the tests write.

#![allow(dead_code)]

/// `toml` with `model = "none"` in its `[engine]` table unless it names a model: these
/// tests exercise the appliance, and the classical engine answers in a fraction of the
/// bundled network's time.
pub fn without_network(toml: &str) -> String {
    const ENGINE: &str = "[engine]\n";
    if toml.contains("model =") {
        return toml.to_string();
    }
    match toml.find(ENGINE) {
        Some(i) => {
            let (head, tail) = toml.split_at(i + ENGINE.len());
            format!("{head}model = \"none\"\n{tail}")
        }
        None => format!("{toml}\n{ENGINE}model = \"none\"\n"),
    }
}
