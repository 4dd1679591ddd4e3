package hostedhosts

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
)

// AutoScaling is the part of the Auto Scaling API the hosts' group uses.
type AutoScaling interface {
	DescribeAutoScalingInstances(ctx context.Context, in *autoscaling.DescribeAutoScalingInstancesInput, opts ...func(*autoscaling.Options)) (*autoscaling.DescribeAutoScalingInstancesOutput, error)
	TerminateInstanceInAutoScalingGroup(ctx context.Context, in *autoscaling.TerminateInstanceInAutoScalingGroupInput, opts ...func(*autoscaling.Options)) (*autoscaling.TerminateInstanceInAutoScalingGroupOutput, error)
}

// Instance is one instance of the hosts' group.
type Instance struct {
	ID string
	// State is its lifecycle state: InService, Pending, Terminating, Warmed:Stopped…
	State string
}

// StateInService is the lifecycle state of an instance that may build.
const StateInService = "InService"

// Group is the hosts' Auto Scaling group through the Auto Scaling API.
type Group struct {
	Client AutoScaling
	Name   string
}

// InService reports whether the instance is in service in the group.
func (g *Group) InService(ctx context.Context, instanceID string) (bool, error) {
	out, err := g.Client.DescribeAutoScalingInstances(ctx, &autoscaling.DescribeAutoScalingInstancesInput{InstanceIds: []string{instanceID}})
	if err != nil {
		return false, fmt.Errorf("describe instance %s: %w", instanceID, err)
	}
	for _, in := range out.AutoScalingInstances {
		if aws.ToString(in.InstanceId) == instanceID && aws.ToString(in.AutoScalingGroupName) == g.Name && aws.ToString(in.LifecycleState) == StateInService {
			return true, nil
		}
	}
	return false, nil
}

// Instances lists the group's instances, every page.
func (g *Group) Instances(ctx context.Context) ([]Instance, error) {
	var out []Instance
	p := autoscaling.NewDescribeAutoScalingInstancesPaginator(g.Client, &autoscaling.DescribeAutoScalingInstancesInput{})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("list the instances of group %s: %w", g.Name, err)
		}
		for _, in := range page.AutoScalingInstances {
			if aws.ToString(in.AutoScalingGroupName) == g.Name {
				out = append(out, Instance{ID: aws.ToString(in.InstanceId), State: aws.ToString(in.LifecycleState)})
			}
		}
	}
	return out, nil
}

// Terminate terminates the instance and lowers the group's desired capacity: the group does
// not replace it; the scaling policy adds hosts when builds wait.
func (g *Group) Terminate(ctx context.Context, instanceID string) error {
	_, err := g.Client.TerminateInstanceInAutoScalingGroup(ctx, &autoscaling.TerminateInstanceInAutoScalingGroupInput{
		InstanceId: aws.String(instanceID), ShouldDecrementDesiredCapacity: aws.Bool(true),
	})
	if err != nil {
		return fmt.Errorf("terminate instance %s: %w", instanceID, err)
	}
	return nil
}
