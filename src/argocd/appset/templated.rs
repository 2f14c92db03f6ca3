//! Applications templated once in a run and shared by both revisions of a
//! diff: an ApplicationSet that is the same at both, over a git directory
//! generator that yields the same directories, templates the same 10,000
//! Applications twice otherwise.
//!
//! Templating an Application is a function of the template, the
//! parameters and the work left to the expansion ([`Budget`]): the
//! functions whose result is random or the clock's are refused in
//! ApplicationSets (`gotemplate::generators`), Argo CD removes `env`,
//! `expandenv` and `getHostByName`, and nothing else reads the tree or the
//! environment. So an Application is taken from here only when all three
//! are exactly those of the render that made it, and the expansion then
//! draws the same work from its budget as that render did. An expansion
//! whose earlier steps drew a different amount templates on its own.

use goyaml::json::LazyValue;
use std::sync::{Arc, Mutex, PoisonError};

use serde_json::Value;

use super::render::{Params, Renderer};
use crate::source::{FastMap, FastSet};
use gotemplate::Budget;

/// Most Applications kept, and most bytes of parameters kept with them:
/// past either, more are templated and not kept (parameters read from
/// large git files would otherwise be held twice for the whole run).
const MAX_KEPT: usize = 200_000;
const MAX_KEPT_BYTES: usize = 256 << 20;

/// Most bytes of contexts kept: an ApplicationSet of many generators over
/// one large template would otherwise keep a copy of it per generator.
const MAX_CONTEXT_BYTES: usize = 64 << 20;

/// See the module doc.
#[derive(Default)]
pub struct Templated(Mutex<Memo>);

#[derive(Default)]
struct Memo {
    /// Everything a render reads besides the parameters, as JSON: its id.
    contexts: FastMap<String, usize>,
    /// By context, parameters as JSON and the budget the render began with:
    /// the Application and the budget it left.
    apps: FastMap<Key, (Arc<LazyValue>, Budget)>,
    /// Bytes of parameters in `apps`' keys.
    key_bytes: usize,
    /// Bytes of `contexts`' keys.
    context_bytes: usize,
    /// Contexts that Applications in `apps` were templated in.
    templated: FastSet<usize>,
}

/// Context id, parameters as JSON, steps and bytes left at the start.
type Key = (usize, String, usize, usize);

impl std::fmt::Debug for Templated {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let memo = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        write!(f, "Templated({} applications)", memo.apps.len())
    }
}

impl Templated {
    /// The id of `context` (what [`Templated::application`]'s render reads
    /// besides its parameters), the same for equal contexts; `None` once
    /// the contexts kept reach [`MAX_CONTEXT_BYTES`] (its Applications are
    /// then templated and not kept).
    pub(crate) fn context(&self, context: &Value) -> Option<usize> {
        let text = context.to_string();
        let mut memo = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(&id) = memo.contexts.get(&text) {
            return Some(id);
        }
        let bytes = memo.context_bytes.saturating_add(text.len());
        if bytes > MAX_CONTEXT_BYTES {
            return None;
        }
        memo.context_bytes = bytes;
        let id = memo.contexts.len();
        memo.contexts.insert(text, id);
        Some(id)
    }

    /// Whether Applications templated in `context` are kept: an expansion
    /// in it finds them again in order rather than templating ahead.
    pub(crate) fn has_templated(&self, context: usize) -> bool {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .templated
            .contains(&context)
    }

    /// The Application `render` gives for `params` in `context`, taken from
    /// an earlier render with the same context, parameters and budget left
    /// when there was one; `renderer`'s budget is then drawn as that render
    /// drew it.
    ///
    /// # Errors
    /// `render`'s.
    pub(crate) fn application(
        &self,
        context: usize,
        params: &Params,
        renderer: &Renderer,
        render: impl FnOnce() -> Result<Value, String>,
    ) -> Result<Arc<LazyValue>, String> {
        let start = renderer.budget();
        // A map's JSON is its content: keys in order, values exact (an
        // integer and a float print differently).
        let key: Key = (
            context,
            serde_json::to_string(params).map_err(|e| e.to_string())?,
            start.steps,
            start.bytes,
        );
        let kept = self
            .0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .apps
            .get(&key)
            .map(|(app, left)| (Arc::clone(app), *left));
        if let Some((app, left)) = kept {
            renderer.set_budget(left);
            return Ok(app);
        }
        let app = Arc::new(LazyValue::from(render()?));
        let mut memo = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let bytes = memo.key_bytes.saturating_add(key.1.len());
        if memo.apps.len() < MAX_KEPT && bytes <= MAX_KEPT_BYTES {
            memo.key_bytes = bytes;
            memo.templated.insert(context);
            memo.apps.insert(key, (Arc::clone(&app), renderer.budget()));
        }
        Ok(app)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contexts_are_kept_up_to_their_bound_and_found_again() {
        let memo = Templated::default();
        let large = |c: char| Value::String(c.to_string().repeat(40 << 20));
        assert_eq!(memo.context(&large('a')), Some(0));
        assert_eq!(memo.context(&large('a')), Some(0));
        // A second one would pass the bound: its Applications are not kept.
        assert_eq!(memo.context(&large('b')), None);
        assert_eq!(memo.context(&Value::from("small")), Some(1));
    }
}
