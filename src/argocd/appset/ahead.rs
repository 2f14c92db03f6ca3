//! Applications templated ahead, in parallel, for a generator's parameter
//! sets, and taken in order by the expansion only where the order-bound
//! budget allows exactly what was drawn.
//!
//! An expansion draws every string it renders from one budget, in the
//! order of the sets ([`Renderer`]), so templating set `i` depends on how
//! much sets before it drew. But the budget is only ever drawn down, and a
//! render reads it only to stop when it runs out: a render that drew
//! `used` from a budget of at least `used` renders the same Application,
//! drawing the same, from any budget of at least `used`. So each set is
//! templated on its own renderer, from a budget of its own, and the
//! expansion takes the result where the budget it has left at that set
//! covers what it drew; anywhere else (an error, a budget run short), the
//! set is templated in order as before, and gives the same error.
//!
//! Templating ahead is bounded as the expansion is: all it draws together
//! is counted against the budget the loop starts with, each render draws
//! from at most its share of what is left (so renders in flight together
//! never draw more than that), and once the count reaches the budget
//! nothing more is templated ahead, and nothing past it is kept. So
//! templating ahead draws at most twice the budget, and what it keeps drew
//! at most the budget.
//!
//! An expansion that already holds Applications of this template
//! ([`Templated`]) finds them again in order and templates nothing ahead.

use rayon::prelude::*;
use serde_json::Value;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::generators::ParamSet;
use super::render::Renderer;
use super::Templated;
use gotemplate::Budget;

/// Fewest parameter sets worth templating ahead: below it, a thread's
/// start costs more than it saves.
const FROM_SETS: usize = 64;

/// What templating one set needs besides its parameters.
pub(super) struct Template<'a> {
    pub(super) go: bool,
    pub(super) options: &'a [String],
    pub(super) merged: &'a Value,
    pub(super) sync_policy: Option<&'a Value>,
    pub(super) patch: Option<&'a str>,
    /// Turns a templated Application into the one the controller writes.
    pub(super) finish: &'a (dyn Fn(Value) -> Value + Sync),
}

/// Each set's Application and the budget it drew, templated ahead within
/// `start` (see the module doc); `None` where templating failed or the
/// budget was spent. Empty when not worth it: few sets, or this context
/// already templated in `memo`.
pub(super) fn template(
    sets: &[ParamSet],
    t: &Template<'_>,
    start: Budget,
    memo: Option<(&Templated, usize)>,
) -> Vec<Option<(Value, Budget)>> {
    if sets.len() < FROM_SETS || memo.is_some_and(|(m, context)| m.has_templated(context)) {
        return Vec::new();
    }
    let share = rayon::current_num_threads().max(1);
    let drawn = [AtomicUsize::new(0), AtomicUsize::new(0)];
    sets.par_iter()
        .map_init(
            || Renderer::new(t.go, t.options).ok(),
            |renderer, set| {
                let renderer = renderer.as_ref()?;
                let [steps_before, bytes_before] =
                    [&drawn[0], &drawn[1]].map(|d| d.load(Ordering::Relaxed));
                let from = Budget {
                    steps: start.steps.checked_sub(steps_before)? / share,
                    bytes: start.bytes.checked_sub(bytes_before)? / share,
                };
                renderer.set_budget(from);
                let app = renderer.application(t.merged, &set.params, t.sync_policy, t.patch);
                // A render draws its budget down, never up.
                let used = from.checked_sub(renderer.budget())?;
                // Charged whether or not it rendered: the work is done.
                let steps_after = drawn[0].fetch_add(used.steps, Ordering::Relaxed) + used.steps;
                let bytes_after = drawn[1].fetch_add(used.bytes, Ordering::Relaxed) + used.bytes;
                if steps_after > start.steps || bytes_after > start.bytes {
                    return None;
                }
                Some(((t.finish)(app.ok()?), used))
            },
        )
        .collect()
}

/// `ahead`'s Application, when `renderer`'s budget covers what it drew;
/// the budget is then drawn by that much, as templating it would.
pub(super) fn take(ahead: Option<(Value, Budget)>, renderer: &Renderer) -> Option<Value> {
    let (app, used) = ahead?;
    renderer.set_budget(renderer.budget().checked_sub(used)?);
    Some(app)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn sets(n: usize) -> Vec<ParamSet> {
        (0..n)
            .map(|i| ParamSet {
                // Lengths differ, so each set draws a different amount.
                params: json!({"name": format!("svc-{i}"), "path": "x/".repeat(i % 7)})
                    .as_object()
                    .cloned()
                    .unwrap_or_default(),
                provenance: format!("element {i}"),
            })
            .collect()
    }

    /// Templated in order, as the expansion did before: each set's
    /// Application and the budget left after it.
    fn in_order(go: bool, t: &Template<'_>, sets: &[ParamSet]) -> Vec<(Value, Budget)> {
        let renderer = Renderer::new(go, t.options).expect("options");
        sets.iter()
            .map(|s| {
                let app = renderer
                    .application(t.merged, &s.params, t.sync_policy, t.patch)
                    .map(t.finish)
                    .expect("renders");
                (app, renderer.budget())
            })
            .collect()
    }

    #[test]
    fn applications_templated_ahead_are_those_templated_in_order_drawing_the_same() {
        for (go, name, path) in [
            (true, "{{.name}}", "apps/{{.path}}{{.name | upper}}"),
            (false, "{{name}}", "apps/{{path}}{{name}}"),
        ] {
            let merged = json!({
                "metadata": {"name": name},
                "spec": {"source": {"path": path}, "destination": {"namespace": name}},
            });
            let options = vec!["missingkey=error".to_string()];
            let t = Template {
                go,
                options: if go { &options } else { &[] },
                merged: &merged,
                sync_policy: None,
                patch: None,
                finish: &unchanged,
            };
            let sets = sets(100);
            let expected = in_order(go, &t, &sets);
            let renderer = Renderer::new(go, t.options).expect("options");
            let mut ahead = template(&sets, &t, renderer.budget(), None);
            assert_eq!(ahead.len(), sets.len(), "100 sets are templated ahead");
            for (i, (app, left)) in expected.into_iter().enumerate() {
                let taken = take(ahead[i].take(), &renderer).expect("the budget covers it");
                assert_eq!(taken, app, "set {i}");
                assert_eq!(renderer.budget(), left, "budget left after set {i}");
            }
        }
    }

    #[test]
    fn an_application_that_drew_more_than_is_left_is_not_taken() {
        let renderer = Renderer::new(false, &[]).expect("no options");
        let left = Budget {
            steps: 10,
            bytes: 100,
        };
        renderer.set_budget(left);
        let app = json!({"metadata": {"name": "a"}});
        for used in [
            Budget {
                steps: 11,
                bytes: 1,
            },
            Budget {
                steps: 1,
                bytes: 101,
            },
        ] {
            assert!(take(Some((app.clone(), used)), &renderer).is_none());
            assert_eq!(renderer.budget(), left, "nothing is drawn");
        }
        let exact = take(Some((app.clone(), left)), &renderer);
        assert_eq!(exact, Some(app));
        assert_eq!(renderer.budget(), Budget { steps: 0, bytes: 0 });
    }

    fn unchanged(v: Value) -> Value {
        v
    }

    /// A fasttemplate template of `merged`.
    fn fast(merged: &Value) -> Template<'_> {
        Template {
            go: false,
            options: &[],
            merged,
            sync_policy: None,
            patch: None,
            finish: &unchanged,
        }
    }

    #[test]
    fn templating_ahead_keeps_what_fits_in_the_budget_and_stops_there() {
        let merged = json!({"metadata": {"name": "{{name}}-{{path}}"}});
        let t = fast(&merged);
        let start = Budget {
            steps: 1_000_000,
            bytes: 2_000,
        };
        let ahead = template(&sets(200), &t, start, None);
        let kept: Vec<&(Value, Budget)> = ahead.iter().flatten().collect();
        let drawn: usize = kept.iter().map(|(_, used)| used.bytes).sum();
        assert!(
            drawn <= start.bytes,
            "kept {drawn} bytes of {}",
            start.bytes
        );
        assert!(kept.len() > 10, "some fit ({})", kept.len());
        assert!(
            ahead.iter().any(Option::is_none),
            "not all 200 fit in 2,000 bytes"
        );
    }

    #[test]
    fn few_sets_or_a_context_already_templated_are_not_templated_ahead() {
        let merged = json!({"metadata": {"name": "{{name}}"}});
        let t = fast(&merged);
        let start = Renderer::new(false, &[]).expect("no options").budget();
        assert!(template(&sets(FROM_SETS - 1), &t, start, None).is_empty());
        let memo = Templated::default();
        let context = memo.context(&json!("context")).expect("room");
        assert_eq!(
            template(&sets(FROM_SETS), &t, start, Some((&memo, context))).len(),
            FROM_SETS
        );
        let renderer = Renderer::new(false, &[]).expect("no options");
        let params = sets(1).remove(0).params;
        memo.application(context, &params, &renderer, || Ok(json!({})))
            .expect("kept");
        assert!(template(&sets(FROM_SETS), &t, start, Some((&memo, context))).is_empty());
    }
}
