/* clock.h: seconds as doubles, monotonic (for durations) and wall (epoch). */
#ifndef BD_CLOCK_H
#define BD_CLOCK_H

double clock_monotonic(void);
double clock_wall(void);

#endif
