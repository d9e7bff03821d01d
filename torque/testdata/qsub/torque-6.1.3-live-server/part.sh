#!/bin/sh
echo "job=$LOOKAHEAD_JOB site=$LOOKAHEAD_SITE part=$LOOKAHEAD_PART parts=$LOOKAHEAD_PARTS start=$LOOKAHEAD_START user=$(id -un) pwd=$(pwd)"
sleep 15
