//! Decoding YAML/JSON text the way Argo CD's `sigs.k8s.io/yaml.Unmarshal`
//! does: only the first document of a stream is read, and an empty stream
//! is `null`.

use serde_json::Value;

/// Parses the first document of `text` (JSON or YAML).
///
/// # Errors
/// A syntax error, as one line.
pub fn parse_first_doc(text: &str) -> Result<Value, String> {
    let trimmed = text.trim_start();
    if trimmed.is_empty() {
        return Ok(Value::Null);
    }
    if trimmed.starts_with('{') || trimmed.starts_with('[') {
        // Argo CD converts only text starting with `{` as JSON directly; JSON
        // is YAML, so either path gives the same value for valid input.
        if let Ok(v) = serde_json::from_str::<Value>(trimmed) {
            return Ok(v);
        }
    }
    let docs = crate::yaml::load_all(text).map_err(|e| e.to_string())?;
    Ok(docs.into_iter().next().map_or(Value::Null, |d| d.value))
}
