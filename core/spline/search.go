package spline

// The interval of tau among knots t[a:b] (one particle's) is the largest i in
// [a, b-2] with t[i] <= tau, or a when there is none (tau before the first
// knot, or NaN). Search finds it by bisection from scratch; SearchFrom starts
// at a guess, gallops towards tau and bisects the bracket. Both keep the same
// invariant, t[lo] <= tau < t[hi] with lo and hi clamped to [a, b-2] and
// [a+1, b-1] read as "below everything" and "above everything", so they return
// the same index by construction; In is the test a cached interval passes
// exactly when Search would return it again.

// Float is the element type of knots: float64, or float32 for kernels that
// run in single precision.
type Float interface{ ~float32 | ~float64 }

// Search is the cold binary search for the interval of tau in t[a:b].
func Search[F Float](t []F, a, b int, tau F) int {
	return bisect(t, a, b-1, tau)
}

// bisect narrows a bracket whose answer is in [lo, hi-1] to that answer.
func bisect[F Float](t []F, lo, hi int, tau F) int {
	for hi-lo > 1 {
		mid := int(uint(lo+hi) >> 1)
		if t[mid] <= tau {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo
}

// In reports whether i is the interval of tau in t[a:b], that is whether
// Search(t, a, b, tau) == i.
func In[F Float](t []F, a, b, i int, tau F) bool {
	return (i == a || t[i] <= tau) && (i == b-2 || !(t[i+1] <= tau))
}

// SearchFrom is the warm-started search: it checks the guessed interval,
// otherwise gallops from it towards tau (steps 1, 2, 4, ...) until a bracket
// holds tau and bisects the bracket like Search. guess is clamped to [a, b-2].
func SearchFrom[F Float](t []F, a, b, guess int, tau F) int {
	if guess < a {
		guess = a
	} else if guess > b-2 {
		guess = b - 2
	}
	if In(t, a, b, guess, tau) {
		return guess
	}
	var lo, hi int // answer in [lo, hi-1], as in Search
	if t[guess] <= tau {
		// Up: t[guess+1] <= tau too (guess was not the answer).
		lo = guess + 1
		step := 1
		for {
			next := lo + step
			if next >= b-1 {
				hi = b - 1
				break
			}
			if t[next] <= tau {
				lo = next
				step <<= 1
			} else {
				hi = next
				break
			}
		}
	} else {
		// Down: tau < t[guess] (or NaN), so the answer is below guess.
		hi = guess
		step := 1
		for {
			next := hi - step
			if next <= a {
				lo = a
				break
			}
			if t[next] <= tau {
				lo = next
				break
			}
			hi = next
			step <<= 1
		}
	}
	return bisect(t, lo, hi, tau)
}
