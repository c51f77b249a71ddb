//! The symmetry reduction of the rejoin model check is sound: renumbering the nodes commutes
//! with every step of the model (and so with the driver's machine), leaves every property's
//! verdict unchanged and keeps the representative; and the reduced check gives the same
//! verdicts as the full one, with fewer states.

use std::collections::HashSet;

use nic_check::rejoin::{Bounds, Cluster, RejoinModel, Start, Step};
use nic_check::{check, Report};
use stateright::Model;

fn permutations(n: usize) -> Vec<Vec<usize>> {
    if n == 0 {
        return vec![Vec::new()];
    }
    let mut out = Vec::new();
    for p in permutations(n - 1) {
        for k in 0..n {
            let mut q = p.clone();
            q.insert(k, n - 1);
            out.push(q);
        }
    }
    out
}

/// A small xorshift generator: the walks are the same at every run.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }
}

fn enabled(model: &RejoinModel, s: &Cluster) -> Vec<Step> {
    let mut steps = Vec::new();
    model.actions(s, &mut steps);
    steps
}

/// For every renumbering `p` of `s`: the steps enabled in `p(s)` are those of `s`
/// renumbered; each step's result renumbered is the renumbered step's result; every
/// property has the same verdict; the representative is the same.
fn commutes(model: &RejoinModel, s: &Cluster) {
    let steps = enabled(model, s);
    let canonical = s.canonical().0;
    for p in permutations(s.nodes.len()) {
        let ps = s.renumbered(&p);
        let mapped: HashSet<Step> = steps.iter().map(|a| a.renumbered(&p)).collect();
        let theirs: HashSet<Step> = enabled(model, &ps).into_iter().collect();
        assert_eq!(mapped, theirs, "steps enabled under renumbering {p:?}");
        for &a in &steps {
            let t = model.next_state(s, a).expect("every step has a result");
            let pt = model
                .next_state(&ps, a.renumbered(&p))
                .expect("every step has a result");
            assert!(
                t.renumbered(&p) == pt,
                "step {a:?} under renumbering {p:?} from\n{}",
                model.describe(s)
            );
        }
        for property in model.properties() {
            assert_eq!(
                (property.condition)(model, s),
                (property.condition)(model, &ps),
                "{} under renumbering {p:?} of\n{}",
                property.name,
                model.describe(s)
            );
        }
        assert!(ps.canonical().0 == canonical, "representative of {p:?}");
    }
}

/// Random walks from the initial state (to deep states a breadth-first sample misses),
/// checking [`commutes`] at every state passed.
fn walks(b: Bounds, walks: usize, length: usize, seed: u64) -> usize {
    let model = RejoinModel::new(b, None).unwrap();
    let mut rng = Rng(seed);
    let mut checked = 0;
    for _ in 0..walks {
        let mut s = model.initial();
        for _ in 0..length {
            commutes(&model, &s);
            checked += 1;
            let steps = enabled(&model, &s);
            if steps.is_empty() {
                break;
            }
            let t = model.next_state(&s, steps[rng.below(steps.len())]).unwrap();
            if !model.within_boundary(&t) {
                break;
            }
            s = t;
        }
    }
    checked
}

fn bounds(nodes: usize, reboots: u8, losses: u8, start: Start) -> Bounds {
    Bounds {
        nodes,
        reboots,
        losses,
        start,
        ..Bounds::small()
    }
}

#[test]
fn renumbering_commutes_with_every_step_three_nodes_cold() {
    let n = walks(bounds(3, 2, 2, Start::Cold), 40, 60, 0x9e37_79b9_7f4a_7c15);
    println!("{n} states checked");
}

#[test]
fn renumbering_commutes_with_every_step_three_nodes_joined() {
    let n = walks(
        bounds(3, 2, 1, Start::Joined),
        40,
        60,
        0x2545_f491_4f6c_dd1d,
    );
    println!("{n} states checked");
}

#[test]
fn renumbering_commutes_with_every_step_rdma_on_its_own_path() {
    let b = Bounds {
        rdma_own_path: true,
        ..bounds(3, 1, 1, Start::Cold)
    };
    let n = walks(b, 30, 60, 0x1234_5678_9abc_def1);
    println!("{n} states checked");
}

fn both(b: Bounds) -> (Report, Report) {
    let on = check(b.clone(), None, 1, false).unwrap();
    let off = check(
        Bounds {
            symmetry: false,
            ..b
        },
        None,
        1,
        false,
    )
    .unwrap();
    for r in [&on, &off] {
        println!(
            "{:?}: symmetry {} {} unique states ({} generated), {:.2} s, failed: {:?}",
            r.bounds,
            r.symmetry,
            r.unique_states,
            r.states,
            r.seconds,
            r.failures.iter().map(|f| f.property).collect::<Vec<_>>()
        );
    }
    let names = |r: &Report| {
        r.failures
            .iter()
            .map(|f| f.property)
            .collect::<HashSet<_>>()
    };
    assert_eq!(names(&on), names(&off), "same verdicts");
    assert!(on.symmetry && !off.symmetry);
    (on, off)
}

/// The reduced and the full check agree at the small bounds, and the reduction merges
/// nearly n! states into one.
#[test]
fn the_reduced_check_agrees_with_the_full_one() {
    let (on, off) = both(bounds(2, 1, 1, Start::Cold));
    assert!(
        on.unique_states * 3 < off.unique_states * 2,
        "2 nodes: about half"
    );
    let (on, off) = both(bounds(3, 1, 0, Start::Joined));
    assert!(
        on.unique_states * 4 < off.unique_states,
        "3 nodes: about a sixth"
    );
    let (on, off) = both(Bounds {
        rdma_own_path: true,
        ..bounds(2, 1, 1, Start::Cold)
    });
    assert!(on.unique_states < off.unique_states);
}

#[test]
fn a_bad_renumbering_is_refused_by_the_machine() {
    let model = RejoinModel::new(bounds(3, 0, 0, Start::Joined), None).unwrap();
    let s = model.initial();
    let machine = &s.nodes[0].live().unwrap().machine;
    for bad in [vec![0, 1], vec![0, 0, 1], vec![0, 1, 3]] {
        let e = machine.renumbered(&bad).unwrap_err().to_string();
        assert!(e.contains("renumbering"), "{e}");
    }
    let m = machine.renumbered(&[2, 0, 1]).unwrap();
    assert_eq!(m.config().node, 2);
    assert_eq!(m.renumbered(&[1, 2, 0]).unwrap(), *machine, "and back");
}
