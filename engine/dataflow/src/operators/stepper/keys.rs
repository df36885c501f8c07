//! Where a fact's key is in the time-stepping operator: the key value and the refining
//! values that make a key's state (`StepperPlan::key`, `sub_key`), and the worker each fact
//! goes to.

use differential_dataflow::Hashable;

use crate::plan::StepperPlan;
use stgflow_lang::ir::Program;
use stgflow_lang::value::{Row, Value};

use super::INPUT_BIT;

/// Where a fact's key is: per predicate its key position and, with a refined key, its
/// refining positions (`StepperPlan::key`, `sub_key`). The state's and the exchange's.
#[derive(Clone)]
pub(super) struct Keys {
    key_positions: Option<Vec<Option<usize>>>,
    /// Per predicate, the refining positions (`StepperPlan::sub_key`) of one that carries
    /// them; `None` for all without a refinement.
    pub(super) sub_positions: Option<Vec<Option<Vec<usize>>>>,
}

impl Keys {
    pub(super) fn new(program: &Program, plan: &StepperPlan) -> Keys {
        let n = program.predicates.len();
        let key_positions = plan.key.as_ref().map(|key| {
            let mut positions = vec![None; n];
            for (&p, &i) in key {
                positions[p] = Some(i);
            }
            positions
        });
        let sub_positions = plan.sub_key.as_ref().map(|sub| {
            let mut positions = vec![None; n];
            for (&p, is) in sub {
                positions[p] = Some(is.clone());
            }
            positions
        });
        Keys {
            key_positions,
            sub_positions,
        }
    }

    /// The value at the key position of a fact tagged `tag`.
    pub(super) fn key_value(&self, tag: u32, row: &[Value]) -> Value {
        let pred = (tag & !INPUT_BIT) as usize;
        self.key_positions
            .as_ref()
            .and_then(|p| p.get(pred).copied().flatten())
            .and_then(|i| row.get(i).copied())
            .unwrap_or(Value::Int(0))
    }

    /// The refining positions of a fact tagged `tag`: `None` for a partial fact, with a
    /// refined key (see [`Group`](super::Group)).
    pub(super) fn refinement(&self, tag: u32) -> Option<Option<&[usize]>> {
        let Some(sub) = &self.sub_positions else {
            return Some(None);
        };
        if tag == super::super::UNIT_TAG {
            return Some(None);
        }
        let pred = (tag & !INPUT_BIT) as usize;
        sub.get(pred)?.as_deref().map(Some)
    }

    /// The key of the state a fact tagged `tag` belongs to (`value` its key value): the
    /// value and those at its refining positions; `None` for a partial fact.
    pub(super) fn state_key(&self, value: Value, tag: u32, row: &[Value]) -> Option<Row> {
        let refinement = self.refinement(tag)?;
        let mut key = Row::new();
        key.push(value);
        key.extend(
            refinement
                .into_iter()
                .flatten()
                .filter_map(|&i| row.get(i).copied()),
        );
        Some(key)
    }

    /// The worker a fact goes to: by its state's key where the key is refined (a partial
    /// fact, which goes to every worker, by its value), by its key value otherwise (0
    /// without a key).
    pub(super) fn route(&self, tag: u32, row: &[Value]) -> u64 {
        if self.key_positions.is_none() {
            return 0;
        }
        let value = self.key_value(tag, row);
        match self.sub_positions {
            Some(_) => self
                .state_key(value, tag, row)
                .map_or_else(|| value.hashed(), |key| key.hashed()),
            None => value.hashed(),
        }
    }
}
