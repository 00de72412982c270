import WorkoutctlCommands

Workoutctl.main()
