/* clock.h: seconds as doubles, monotonic (for durations) and wall (epoch). */
#ifndef BD_CLOCK_H
#define BD_CLOCK_H

double now_monotonic(void);
double now_wall(void);

#endif
